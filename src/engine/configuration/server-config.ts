import path from 'node:path';
import { defaultPriceCurve, type PriceCurve } from '../../domain/pricing.js';
import { defaultSiteTiming } from '../../scheduler/site.js';
import type { PeersConfig } from '../migration/peers.js';
import type { ClusterFile } from './cluster-file.js';

/** Who runs the jobs of accepted agreements (docs/operations.md "Running with a real executor"). */
export interface SlurmConfig {
  conf?: string;
  partition?: string;
  user?: string;
  executables?: string[];
  checkpointSignal?: string;
  checkpointTimeoutSeconds?: number;
}

export type ExecutorKind = 'local' | 'simulated' | 'slurm' | 'none';
export const executorKinds: readonly ExecutorKind[] = ['local', 'simulated', 'slurm', 'none'];

/** How Linux schedules the server's threads: SCHED_BATCH, or its default. */
export type CpuScheduling = 'batch' | 'normal';
export const cpuSchedulings: readonly CpuScheduling[] = ['batch', 'normal'];

export interface ServerConfig {
  /** Interface to listen on. Env HOST. Default 127.0.0.1 (loopback only). */
  host: string;
  /** TCP port. Env PORT. Default 8080; 0 picks a free port. */
  port: number;
  /** Where the SQLite database lives. Env WSAG_DATA_DIR. Default ./data. */
  dataDir: string;
  /**
   * Public base URL used in EPRs and WSDL addresses. Env WSAG_PUBLIC_URL. Default: the address each request was sent
   * to (its Host), else the listening address (with HOST=0.0.0.0, this host's name).
   */
  publicUrl?: string;
  /**
   * Proxies whose X-Forwarded-Host and X-Forwarded-Proto name the address in answers: IP addresses and CIDR ranges.
   * Env WSAG_TRUSTED_PROXIES (comma-separated). Default none.
   */
  trustedProxies: string[];
  /** Directory of agreement templates. Env WSAG_TEMPLATES_DIR. Default ./templates. */
  templatesDir: string;
  /**
   * Without a cluster file: how many identical nodes the scheduler plans on (ids n001,
   * n002, ...; each with identicalNode's properties). Env WSAG_CLUSTER_NODES. Default 64.
   */
  clusterNodes: number;
  /**
   * Without a cluster file: how many of those nodes (the last ones) are buffer nodes, which only best-effort and
   * background jobs use. Env WSAG_BUFFER_NODES. Default 0.
   */
  bufferNodes: number;
  /**
   * Without a cluster file: how many of those nodes (the last ones before the buffer nodes) are
   * kept prepared for interactive sessions, which start on them within WSAG_INTERACTIVE_START_SECONDS;
   * SLA jobs other than sessions do not use them. Env WSAG_WARM_NODES. Default (unset) 4 of
   * the shipped 64 nodes, else 0 (`warmNodesOf`).
   */
  warmNodes?: number;
  /**
   * A JSON cluster description: node groups, timing overrides, peer standby nodes (see examples/cluster.json). Env
   * WSAG_CLUSTER_FILE. Default none.
   */
  clusterFile?: string;
  /** The cluster file's contents, read and checked at start-up (or given directly). */
  cluster?: ClusterFile;
  /**
   * The problem horizon: the usual repair time of a node, seconds. Env WSAG_PROBLEM_HORIZON_SECONDS. Default the
   * cluster file's timing.problemHorizonSeconds, else 14400 (4 h).
   */
  problemHorizonSeconds: number;
  /**
   * The planning horizon: how far ahead the plan reaches, days; later times in an offer are refused (CannotSatisfy
   * naming the element). Env WSAG_PLANNING_HORIZON_DAYS. Default 365.
   */
  planningHorizonDays: number;
  /**
   * Standby nodes a peer provider keeps for Full jobs. Env WSAG_PEER_STANDBY_NODES. Default the cluster file's
   * peerStandbyNodes, else 0 (Full service is refused).
   */
  peerStandbyNodes: number;
  /** Largest request body accepted, bytes. Env WSAG_MAX_BODY_BYTES. Default 1 MiB. */
  maxBodyBytes: number;
  /** Deepest element nesting accepted in a request. Env WSAG_MAX_XML_DEPTH. Default 64. */
  maxXmlDepth: number;
  /**
   * How long one request may take to arrive whole (headers within 10 s of it), seconds; a slower one is cut off with
   * 408. Env WSAG_REQUEST_TIMEOUT_SECONDS. Default 30.
   */
  requestTimeoutSeconds: number;
  /** Name of the provider in agreement contexts. Env WSAG_PROVIDER_NAME. Default wsag-server. */
  providerName: string;
  /** Log level (pino). Env LOG_LEVEL. Default info; `silent` turns logging off. */
  logLevel: string;
  /**
   * How long a preparatory reservation (an Acceptable counter-offer) is held, seconds. Env WSAG_HOLD_SECONDS. Default
   * 300.
   */
  holdSeconds: number;
  /**
   * How long before a lease (a reservation window) ends its holder gets a notice through its subscriptions, seconds.
   * Env WSAG_LEASE_NOTICE_SECONDS. Default 600.
   */
  leaseNoticeSeconds: number;
  /** Negotiate calls answered per negotiation before it is closed. Env WSAG_NEGOTIATION_MAX_ROUNDS. Default 20. */
  negotiationMaxRounds: number;
  /** Longest a negotiation stays open, seconds. Env WSAG_NEGOTIATION_MAX_SECONDS. Default 3600. */
  negotiationMaxSeconds: number;
  /** Start slots offered in answer to an Advisory offer. Env WSAG_ADVISORY_SLOTS. Default 3. */
  advisorySlots: number;
  /**
   * An interactive job (sla:Interactive) starts within this many seconds of acceptance or is refused. Env
   * WSAG_INTERACTIVE_START_SECONDS. Default 5.
   */
  interactiveStartSeconds: number;
  /**
   * The PostgreSQL database to store in instead of SQLite (docs/deployment.md), as a URL such
   * as postgres://wsag@db.example.org/wsag. Env WSAG_DATABASE_URL. Default none: SQLite in the data directory.
   */
  databaseUrl?: string;
  /**
   * With several instances on one database: the URL the other instances reach this one at
   * when it is the planning leader. Env WSAG_INSTANCE_URL. Default the HTTP listener's own address.
   */
  instanceUrl?: string;
  /**
   * Shared by the instances of one cluster: a standby forwarding a TLS caller's certificate
   * chain to the leader proves with it that it took the handshake. Env WSAG_CLUSTER_SECRET;
   * required with WSAG_DATABASE_URL and WSAG_TLS_PORT together.
   */
  clusterSecret?: string;
  /** Currency of prices and fees (ISO 4217). Env WSAG_CURRENCY. Default EUR. */
  currency: string;
  /** Price of one node-hour at guarantee level Legacy. Env WSAG_NODE_HOUR_PRICE. Default 1.00. */
  nodeHourPrice: number;
  /** Preparatory fee as a fraction of the regular price. Env WSAG_PREPARATORY_FEE_RATE. Default 0.05. */
  preparatoryFeeRate: number;
  /**
   * Demand pricing (docs/pricing.md): the price factor by the plan's load over a slot, as
   * points LOAD:FACTOR. Env WSAG_PRICE_CURVE. Default 0:1,0.5:1,0.8:1.5,1:2; 0:1,1:1 is flat.
   */
  priceCurve: PriceCurve;
  /** Identities with the operator (admin) role, comma-separated. Env WSAG_ADMINS. Default none. */
  admins: string[];
  /**
   * Address ranges callbacks and acceptance addresses may reach besides public ones
   * (loopback, private, link-local; docs/security.md, "Outbound calls"). Env
   * WSAG_OUTBOUND_ALLOW, comma-separated. Default none.
   */
  outboundAllow: Array<'loopback' | 'private' | 'link-local'>;
  /**
   * Fair-use limits per party (docs/security.md, "Fair use"): `off`, or NAME=VALUE pairs over
   * the defaults (share=0.5, nodeHours, agreements=200, pending=20, pendingSeconds=3600,
   * negotiations=20, checkpointBytes). Env WSAG_FAIR_USE. Default: the defaults when TLS is
   * on; off when it is not (every caller is then the one party `anonymous`).
   */
  fairUse?: string;
  /** HTTPS port with client certificates (TLS). Env WSAG_TLS_PORT. Default none: TLS is off. 0 picks a free port. */
  tlsPort?: number;
  /** The server's certificate (PEM; with its chain after it). Env WSAG_TLS_CERT. Default DATA_DIR/pki/server.pem. */
  tlsCertFile: string;
  /** The server certificate's private key (PEM). Env WSAG_TLS_KEY. Default DATA_DIR/pki/server.key. */
  tlsKeyFile: string;
  /**
   * The trusted CA certificates (PEM bundle): callers' chains and signatures must lead to one. Env WSAG_CA_FILE.
   * Default DATA_DIR/pki/ca.pem.
   */
  caFile: string;
  /**
   * Whether requests without a client certificate or WS-Security signature are served, as
   * the party `anonymous`. Env WSAG_ANONYMOUS (allow | deny). Default allow when TLS is off,
   * deny when it is on.
   */
  anonymous: 'allow' | 'deny';
  /**
   * Whether the provider signs the agreements it creates (with the TLS certificate and key). Env WSAG_SIGN_AGREEMENTS
   * (on | off). Default on when the certificate and key files exist.
   */
  signAgreements: boolean;
  /**
   * Worker threads for the document work of CreateAgreement (reading offers, signing
   * agreements), so it runs beside the event loop; 0 does it on the loop. Env
   * WSAG_DOCUMENT_THREADS (WSAG_SIGNING_THREADS, its earlier name, still counts). Default
   * (unset): two fewer than the machine's cores, at least one on two cores, none on one.
   */
  documentThreads?: number;
  /**
   * `batch`: `npm start` and `wsag serve` put every thread of the server under Linux's
   * SCHED_BATCH policy (src/runtime/cpu-scheduling.ts: a woken thread does not take the event
   * loop's core; more negotiations a second under load, a longer tail of latencies at a
   * steady rate); `normal` leaves the default. Env WSAG_CPU_SCHEDULING. Default normal.
   */
  cpuScheduling: CpuScheduling;
  /**
   * Who runs the jobs of accepted agreements. Env WSAG_EXECUTOR: `local` (each job a local
   * process, checkpoints as files), `simulated` (nothing runs; each job takes its planned
   * time on the clock), `slurm` (the cluster, the plan's reservations and the jobs are
   * Slurm's, docs/operations.md "Slurm"), `none` (no run time: agreements stay
   * Observed). Default local.
   */
  executor: ExecutorKind;
  /**
   * With WSAG_EXECUTOR=slurm (docs/operations.md "Slurm"): the slurm.conf to use (env
   * WSAG_SLURM_CONF; default Slurm's own), the partition whose nodes are the cluster and
   * where jobs run (WSAG_SLURM_PARTITION; default every node, Slurm's default partition),
   * the user the reservations are for (WSAG_SLURM_USER; default the server's user), the
   * path prefixes of executables an offer may name (WSAG_SLURM_EXECUTABLES, comma-separated;
   * default none: only the site's default job runs), the checkpoint signal
   * (WSAG_SLURM_CHECKPOINT_SIGNAL; default USR1) and how long a job may take to write its
   * checkpoint (WSAG_SLURM_CHECKPOINT_TIMEOUT_SECONDS; default 60).
   */
  slurm?: SlurmConfig;
  /**
   * The local executor's demo job of a batch job: wall-clock seconds per second of runtime estimate (a session holds
   * its nodes to its window's end). Env WSAG_CPU_TIME_SCALE. Default 0.001 (an hour runs in 3.6 s).
   */
  cpuTimeScale: number;
  /**
   * Where the local executor keeps job directories and checkpoints, and received checkpoints are stored. Env
   * WSAG_CHECKPOINT_DIR. Default DATA_DIR/checkpoints.
   */
  checkpointDir: string;
  /** Largest checkpoint a peer may upload, bytes. Env WSAG_MAX_CHECKPOINT_BYTES. Default 1 GiB. */
  maxCheckpointBytes: number;
  /**
   * The peers file (docs/operations.md "Peers and migration"). Env WSAG_PEERS_FILE. Default none: no migration, no
   * remote standby.
   */
  peersFile?: string;
  /**
   * The site's VO usage policy: shares per VO, group and user over an epoch (docs/vo-policy.md). Env
   * WSAG_VO_POLICY_FILE. Default none: no shares are enforced.
   */
  voPolicyFile?: string;
  /** The peers file's contents, read and checked at start-up (or given directly). */
  peers?: PeersConfig;
}

export const defaultConfig: ServerConfig = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: path.resolve('data'),
  templatesDir: path.resolve('templates'),
  trustedProxies: [],
  clusterNodes: 64,
  bufferNodes: 0,
  problemHorizonSeconds: defaultSiteTiming.problemHorizonSeconds,
  planningHorizonDays: 365,
  peerStandbyNodes: 0,
  maxBodyBytes: 1024 * 1024,
  maxXmlDepth: 64,
  requestTimeoutSeconds: 30,
  providerName: 'wsag-server',
  logLevel: 'info',
  holdSeconds: 300,
  leaseNoticeSeconds: 600,
  negotiationMaxRounds: 20,
  negotiationMaxSeconds: 3600,
  advisorySlots: 3,
  currency: 'EUR',
  nodeHourPrice: 1,
  preparatoryFeeRate: 0.05,
  priceCurve: defaultPriceCurve,
  interactiveStartSeconds: 5,
  admins: [],
  outboundAllow: [],
  tlsCertFile: path.resolve('data/pki/server.pem'),
  tlsKeyFile: path.resolve('data/pki/server.key'),
  caFile: path.resolve('data/pki/ca.pem'),
  anonymous: 'allow',
  signAgreements: false,
  executor: 'local',
  cpuScheduling: 'normal',
  cpuTimeScale: 0.001,
  checkpointDir: path.resolve('data/checkpoints'),
  maxCheckpointBytes: 1024 * 1024 * 1024,
};
