// The npm packages' check from CommonJS (scripts/test-dist.sh): enqueue, claim,
// complete on $EMQ_URL; prints both packages' versions.
'use strict'
const assert = require('node:assert/strict')
const { connect } = require('echomq')

connect(process.env.EMQ_URL).then(async (client) => {
  const enqueued = await client.enqueue('dist-node', Buffer.from('from npm'))
  const job = await client.claim('dist-node', 10000)
  assert.equal(job.id, enqueued.id)
  assert.equal(job.payload.toString(), 'from npm')
  await client.complete('dist-node', job.id, job.token)
  const counts = await client.counts('dist-node')
  assert.deepEqual([counts.pending, counts.active, counts.completed], [0, 0, 1])
  await client.close()
  const main = require('echomq/package.json').version
  const platform = require('echomq-linux-x64-gnu/package.json').version
  console.log(`main=${main} platform=${platform}`)
})
