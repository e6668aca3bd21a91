// The npm packages' check from ESM (scripts/test-dist.sh): the named and
// default exports both load, and a job goes round through the default export.
import assert from 'node:assert/strict'
import echomq, { connect, protocolVersion } from 'echomq'

assert.equal(echomq.connect, connect)
const client = await connect(process.env.EMQ_URL)
const enqueued = await client.enqueue('dist-esm', 'from esm')
const job = await client.claim('dist-esm', 10000)
assert.equal(job.id, enqueued.id)
await client.complete('dist-esm', job.id, job.token)
assert.equal((await client.counts('dist-esm')).completed, 1)
await client.close()
console.log(protocolVersion())
