import { ConfigError, loadConfig } from './engine/configuration/index.js';
import { startConfigured } from './assembly/cluster.js';
import { describeScheduling, scheduleProcess } from './runtime/cpu-scheduling.js';
import { DataDirInUse } from './store/data-dir-lock.js';
import { TemplateError } from './xml/template-library.js';

/** `npm start`: serve with configuration from the environment until SIGINT or SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // Before the server starts its threads, which inherit the policy.
  const scheduling = scheduleProcess(config.cpuScheduling);
  // On PostgreSQL, instances sharing the database elect a planning leader (docs/deployment.md).
  const server = await startConfigured(config);
  const role =
    'role' in server
      ? ` (${server.role() === 'leader' ? 'the planning leader' : 'a standby: requests go to the planning leader'})`
      : '';
  console.log(`wsag-server listening on ${server.url}${role}`);
  for (const [name, url] of Object.entries(server.endpoints))
    console.log(`  ${name.padEnd(24)} ${url}  (WSDL: ${url}?wsdl)`);
  console.log(`  health                   ${server.url}/healthz`);
  console.log(`  dashboard                ${server.url}/ui/`);
  console.log(`  metrics                  ${server.url}/metrics`);
  if (server.tlsUrl) console.log(`  TLS (client certificates) ${server.tlsUrl}  (the same ports under this base URL)`);
  console.log(`  data                     ${config.dataDir}`);
  console.log(`  CPU scheduling           ${describeScheduling(scheduling)}`);
  const stop = async (): Promise<void> => {
    await server.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof TemplateError || error instanceof DataDirInUse) {
    console.error(`wsag-server: ${error.message}`);
  } else {
    console.error('wsag-server failed to start:', error);
  }
  process.exit(1);
});
