import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, type ServerConfig } from '../../engine/configuration/index.js';
import type { Command } from '../command.js';
import { CliError, UsageError } from '../errors.js';

/** The templates shipped with wsag-server, used when neither --templates-dir nor WSAG_TEMPLATES_DIR is given. */
export const shippedTemplatesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../templates');

export const serveCommand: Command = {
  name: 'serve',
  summary: 'start the server (like npm start)',
  synopsis: 'wsag serve [--port PORT] [--host HOST] [--data-dir DIR] [--templates-dir DIR]',
  description: [
    'Starts wsag-server with the configuration from the environment (PORT, HOST,',
    'WSAG_DATA_DIR, WSAG_TEMPLATES_DIR, WSAG_CLUSTER_NODES, WSAG_ADMINS, LOG_LEVEL, ...; see',
    'src/engine/configuration/config.ts) and prints the endpoint URLs. Flags override the environment.',
    'Runs until SIGINT (Ctrl-C) or SIGTERM. Logs go to stdout as JSON lines (pino).',
  ],
  optionHelp: [
    '  --port PORT        TCP port (env PORT, default 8080; 0 picks a free port)',
    '  --host HOST        interface to listen on (env HOST, default 127.0.0.1)',
    '  --data-dir DIR     where the SQLite database lives (env WSAG_DATA_DIR, default ./data)',
    '  --templates-dir DIR',
    '                     agreement templates (env WSAG_TEMPLATES_DIR, default: the shipped templates)',
  ],
  options: {
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    'data-dir': { type: 'string' },
    'templates-dir': { type: 'string' },
  },
  positionals: [],
  async run(args, ctx) {
    const overrides: Partial<ServerConfig> = {};
    const port = args.string('port');
    if (port !== undefined) {
      if (!/^\d+$/.test(port) || Number(port) > 65535)
        throw new UsageError(`--port must be a whole number from 0 to 65535, got "${port}"`);
      overrides.port = Number(port);
    }
    const host = args.string('host');
    if (host !== undefined) overrides.host = host;
    const dataDir = args.string('data-dir');
    if (dataDir !== undefined) overrides.dataDir = path.resolve(dataDir);
    const templatesDir = args.string('templates-dir') ?? (ctx.env.WSAG_TEMPLATES_DIR ? undefined : shippedTemplatesDir);
    if (templatesDir !== undefined) overrides.templatesDir = path.resolve(templatesDir);

    // A flag replaces its variable entirely, so a bad value there does not matter.
    const env = { ...ctx.env };
    if (overrides.port !== undefined) delete env.PORT;
    if (overrides.host !== undefined) delete env.HOST;
    if (overrides.dataDir !== undefined) delete env.WSAG_DATA_DIR;
    if (args.string('templates-dir') !== undefined) delete env.WSAG_TEMPLATES_DIR;
    let config: ServerConfig;
    try {
      config = loadConfig(env, overrides);
    } catch (error) {
      if (error instanceof ConfigError) throw new CliError(error.message);
      throw error;
    }
    // Loaded on demand: the client commands need none of the server's dependencies.
    const { startConfigured } = await import('../../assembly/cluster.js');
    const { TemplateError } = await import('../../xml/template-library.js');
    const { describeScheduling, scheduleProcess } = await import('../../runtime/cpu-scheduling.js');
    // Before the server starts its threads, which inherit the policy.
    const scheduling = scheduleProcess(config.cpuScheduling);
    let server: Awaited<ReturnType<typeof startConfigured>>;
    try {
      server = await startConfigured(config);
    } catch (error) {
      if (error instanceof TemplateError || error instanceof ConfigError) throw new CliError(error.message);
      throw error;
    }
    ctx.out(`wsag-server listening on ${server.url}`);
    for (const [name, url] of Object.entries(server.endpoints))
      ctx.out(`  ${name.padEnd(24)} ${url}  (WSDL: ${url}?wsdl)`);
    ctx.out(`  ${'health'.padEnd(24)} ${server.url}/healthz`);
    ctx.out(`  ${'dashboard'.padEnd(24)} ${server.url}/ui/`);
    ctx.out(`  ${'metrics'.padEnd(24)} ${server.url}/metrics`);
    ctx.out(`  ${'agreements (JSON)'.padEnd(24)} ${server.url}/api/agreements`);
    ctx.out(`  ${'negotiations (JSON)'.padEnd(24)} ${server.url}/api/negotiations`);
    ctx.out(`  ${'plan (JSON)'.padEnd(24)} ${server.url}/api/plan`);
    ctx.out(`  ${'data'.padEnd(24)} ${config.dataDir}`);
    ctx.out(`  ${'templates'.padEnd(24)} ${config.templatesDir}`);
    ctx.out(`  ${'CPU scheduling'.padEnd(24)} ${describeScheduling(scheduling)}`);
    ctx.out(`try: wsag templates --url ${server.url}`);
    await ctx.untilStopped();
    await server.close();
  },
};
