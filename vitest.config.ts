import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Interop tests start servers and external tools (zeep, xmllint): give them room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
