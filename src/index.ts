export type { ChangeBus, ChangeEvent } from "./bus.js";
export { LocalBus } from "./bus.js";
export type { AuthInfo, ConnectionOptions, Principal, SessionSlot } from "./connection.js";
export {
  ClientRequestError,
  Connection,
  principalFrom,
  principalOf,
  RequestTimeoutError,
  sessionSlot,
} from "./connection.js";
export { type LinkOptions, link } from "./content.js";
export type {
  ClientRequestOptions,
  ClientView,
  Completer,
  CompletionAnswer,
  Context,
  ElicitFormParams,
  ElicitResult,
  ElicitUrlParams,
  ResourceContext,
  Root,
  SampleParams,
  SampleResult,
  TaskHandle,
} from "./context.js";
export type { ErrorInfo } from "./core.js";
export type { HandleOptions } from "./dispatch/envelope.js";
export type { RequestStateOptions } from "./eras/request-state.js";
export {
  type CacheHint,
  type CacheOptions,
  hasStatelessMeta,
  /** @deprecated the name of {@link hasStatelessMeta} before 0.2 */
  hasStatelessMeta as hasModernMeta,
  META,
  readStatelessMeta,
  /** @deprecated the name of {@link readStatelessMeta} before 0.2 */
  readStatelessMeta as readModernMeta,
  type StatelessMeta,
  /** @deprecated the name of {@link StatelessMeta} before 0.2 */
  type StatelessMeta as ModernMeta,
} from "./eras/stateless.js";
export {
  type Features,
  LATEST_SESSION_VERSION,
  /** @deprecated the name of {@link LATEST_SESSION_VERSION} before 0.2 */
  LATEST_SESSION_VERSION as LATEST_LEGACY_VERSION,
  LATEST_STATELESS_VERSION,
  /** @deprecated the name of {@link LATEST_STATELESS_VERSION} before 0.2 */
  LATEST_STATELESS_VERSION as MODERN_VERSION,
  type ProtocolVersion,
  SESSION_VERSIONS,
  /** @deprecated the name of {@link SESSION_VERSIONS} before 0.2 */
  SESSION_VERSIONS as LEGACY_VERSIONS,
  STATELESS_VERSIONS,
  SUPPORTED_VERSIONS,
} from "./eras/versions.js";
export { ClientCapabilityError, ErrorCode, type ErrorCodeValue, McpError } from "./errors.js";
export { APP_MIME_TYPE, APPS, type AppOptions, type AppUi, rendersApps } from "./ext/apps.js";
export { type BuiltIn, defaultExtensions } from "./ext/builtins.js";
export type { SubscriptionFilter } from "./ext/listen.js";
export { SKILLS, type SkillOptions } from "./ext/skills.js";
export {
  MemoryTaskStore,
  type MemoryTaskStoreOptions,
  type TaskPeer,
  type TaskRecord,
  type TaskSignal,
  type TaskStatus,
  type TaskStore,
} from "./ext/task-store.js";
export { TASKS, type TaskOptions } from "./ext/tasks.js";
export {
  type BuiltInBrand,
  type Carrier,
  clientDeclares,
  type Era,
  type Extension,
  type ExtensionMethod,
  type MessageObservation,
  type MessageStart,
  type MethodWrapper,
  type NotificationContext,
  type NotificationHandler,
  type Observer,
} from "./extension.js";
export { encodeMessage, errorResponse, expectsAnswer, parseErrorResponse } from "./jsonrpc.js";
export { type CountStore, MemoryCountStore } from "./limits/counts.js";
export type { LimitsOptions } from "./limits/governor.js";
export {
  type Bucket,
  MemoryRateStore,
  type MemoryRateStoreOptions,
  type Rate,
  type RateLimits,
  type RateStore,
} from "./limits/rate.js";
export { LIMIT_CODE, type LimitData, type Share } from "./limits/shares.js";
export type { PromptArgument, PromptOptions } from "./prompts/prompts.js";
export type { RegistryOptions } from "./registry.js";
export { type RequestSlot, requestSlot } from "./request/slot.js";
export type { ResourcesAsToolsOptions } from "./resources/as-tools.js";
export type { LooseUriParams, UriParams, UriVariableName } from "./resources/params.js";
export { isUnsafePathValue, PathEscapeError, safeJoin } from "./resources/path-safety.js";
export type { ListedResource, ResourceOptions } from "./resources/resources.js";
export type { SubscriptionLimits } from "./resources/subscriptions.js";
export {
  parseUriTemplate,
  type UriExpandValue,
  type UriExpandValues,
  type UriScalar,
  type UriTemplate,
  UriTemplateError,
  type UriTemplateLimits,
  type UriTemplateOptions,
  type UriValues,
} from "./resources/template.js";
export type { FromJsonSchema } from "./schema/infer.js";
export type { JsonSchemaObject, JsonSchemaValidator, SchemaIssue } from "./schema/schema.js";
export { McpServer, type McpServerOptions, type Registration } from "./server.js";
export type { ToolOptions } from "./tools/tools.js";
export type * from "./types.js";
export { ContextView, extendContext } from "./views/context-view.js";
export type { CallerLimits, ExtensionHost, SessionHandle, ShareName } from "./views/host.js";
