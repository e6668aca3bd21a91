// ESM entry: the same module as index.js (one addon instance per thread).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const echomq = require('./index.js')

export const {
  connect,
  Client,
  Queue,
  Worker,
  Subscription,
  WORKER_EVENTS,
  setLogHandler,
  promClientCollector,
  EchoMQError,
  UnrecoverableError,
  ErrorCode,
  errorKinds,
  defaults,
  optionSchema,
  mintJobId,
  parseId,
  isValidId,
  encodeId,
  lexBound,
  isValidQueue,
  queueKey,
  jobKey,
  classify,
  slot,
  protocolVersion,
} = echomq
export default echomq
