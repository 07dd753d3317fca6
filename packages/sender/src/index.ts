/**
 * @module
 * `@linkhooks/sender`: the engine the platform runs. `createSender` validates and fans events out,
 * stores them durably before `publish` returns, delivers them over HTTPS with HMAC signatures on the
 * retry schedule of design R12, disables endpoints that keep failing and keeps the delivery log — on an
 * embedded SQLite store or on PostgreSQL shared by several machines.
 */
export {
  API_KEY_PREFIX,
  authenticateApiKey,
  type CreatedAccount,
  createAccount,
  hashApiKey,
  isPlan,
  PLANS,
  type Plan,
  planAllowsWebhooks,
  WEBHOOK_PLANS,
} from './accounts.js';
export { type Clock, ManualClock, systemClock } from './clock.js';
export { type AddressPolicy, checkAddress, checkUrl, createGuardedLookup } from './delivery/address-guard.js';
export {
  createDevelopmentCertificates,
  type DevelopmentCertificates,
} from './delivery/development-certificates.js';
export {
  type AttemptDecision,
  type AttemptOutcome,
  CLAIMABLE_STATUSES,
  DELIVERY_STATUSES,
  type DeliveryStatus,
  decideAfterAttempt,
  FAILURE_KINDS,
  type FailureKind,
  FINAL_STATUSES,
  isSuccessStatus,
} from './domain/delivery-state.js';
export {
  DEFAULT_DISABLE_POLICY,
  DISABLE_THRESHOLD,
  type DisablePolicy,
  decideEndpoint,
} from './domain/disable-rule.js';
export {
  ATTEMPT_TIMEOUT_MS,
  delayAfterAttempt,
  RETRY_DELAYS_MS,
  type RetrySchedule,
} from './domain/schedule.js';
export {
  decideTransition,
  mayDisable,
  type Transition,
  type TransitionRules,
  type TransitionState,
} from './domain/transition.js';
export {
  DEFAULT_STATS_WINDOW,
  type EndpointStats,
  type EndpointStatsOperations,
  STATS_WINDOWS,
  type StatsBucket,
  type StatsWindowName,
} from './engine/endpoint-stats.js';
export {
  DEFAULT_PORTAL_TTL_SECONDS,
  MAX_PORTAL_TTL_SECONDS,
  type PortalOpened,
  type PortalRefusal,
  type PortalSession,
  type PortalSessions,
} from './engine/portal-sessions.js';
export {
  type AccountAdministration,
  type ApiKey,
  createSender,
  type EndpointOperations,
  type NewEndpointInput,
  type PublishInput,
  type PublishResult,
  type Recovered,
  type RecoverInput,
  type RotatedKey,
  type Sender,
  type SenderOptions,
  USER_AGENT,
} from './engine/sender.js';
export { isSenderError, SENDER_ERROR_STATUS, SenderError, type SenderErrorCode } from './errors.js';
export { EVENT_LOOP_SAMPLE_MS } from './metrics.js';
export { createMemoryStore } from './store/memory-store.js';
export type { Migration, MigrationReport } from './store/migration-plan.js';
export { nextTurnCursor } from './store/pick-due.js';
export type {
  AccountCatalogue,
  AttemptApplied,
  AttemptResult,
  Catalogue,
  ClaimedTurn,
  ClaimRequest,
  ClaimShares,
  DeliveryFilter,
  DeliveryQueue,
  KeyHolder,
  LeaseRef,
  NewPortalToken,
  Page,
  PortalTokens,
  ProbeRequest,
  Published,
  RecoverRequest,
  RecoverResult,
  Resumed,
  SenderStore,
  StoreCapabilities,
  StoreStats,
  TakenPortalToken,
  TurnRequest,
} from './store/port.js';
export { createPostgresStore, type PostgresStoreOptions } from './store/postgres/postgres-store.js';
export type {
  AccountRecord,
  ApiKeyRecord,
  AttemptRecord,
  ClaimedDelivery,
  DeliveryRecord,
  EndpointRecord,
  EventRecord,
} from './store/records.js';
export { createSqliteStore, type SqliteStoreOptions } from './store/sqlite/sqlite-store.js';
export type { AttemptBucket, EndpointStatistics, StatsWindow, WindowStats } from './store/stats-port.js';
export type { AttemptMade, AttemptReport, AttemptUnsent } from './worker/attempt.js';
