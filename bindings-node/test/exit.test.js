// Failure edges at the end of a program (issue #39 §1, §4): a script that
// closes its worker and ends, with the server up or killed just before, exits
// with status 0 after run() settled, never hanging on a server that is gone;
// a worker the version fence refuses after an upgrade ends its run with the
// typed fence error instead of retrying forever.
'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { startRedis, uniqueQueue, waitFor, PKG } = require('./helpers')
const emq = require('..')

const RUNS = 10

/** The server's process id, from INFO (to kill it under the script). */
async function serverPid(server) {
  const info = await server.raw.cmd('INFO', 'server')
  return Number(/process_id:(\d+)/.exec(info)[1])
}

const SCRIPT = `
const emq = require(process.argv[1])
const [url, q, pid] = [process.argv[2], process.argv[3], Number(process.argv[4])]
;(async () => {
  const client = await emq.connect(url)
  for (let i = 0; i < 4; i++) await client.enqueue(q, 'job')
  let started
  const first = new Promise((r) => (started = r))
  const worker = new emq.Worker(client, q, async () => {
    started()
    await new Promise((r) => setTimeout(r, 50))
  }, { concurrency: 2, shutdownGraceMs: 2000 })
  const run = worker.run()
  await first
  if (pid > 0) process.kill(pid, 'SIGKILL')
  const stopped = Date.now()
  await worker.close()
  await run.then(() => console.log('returned ok'), (e) => console.log('returned ' + e.code))
  console.log('run settled after ' + (Date.now() - stopped) + ' ms')
})()
`

function runScript(args, timeoutMs = 60000) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SCRIPT, PKG, ...args])
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the script did not exit within ${timeoutMs} ms\n${out}`))
    }, timeoutMs)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, out })
    })
  })
}

for (const killed of [false, true]) {
  test(`a script that closes its worker and ends exits cleanly (server ${killed ? 'killed' : 'up'})`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const server = await startRedis()
      try {
        const pid = killed ? await serverPid(server) : 0
        const started = Date.now()
        const { code, signal, out } = await runScript([server.url, uniqueQueue('exit'), String(pid)])
        console.log(`server ${killed ? 'killed' : 'up'}, run ${run}: ${Date.now() - started} ms; ${out.trim().split('\n').pop()}`)
        assert.equal(signal, null, out)
        assert.equal(code, 0, out)
        assert.match(out, /returned ok/, 'run() settled, resolved')
      } finally {
        // A server the script killed is gone already (stop() would wait
        // for an exit that has happened): only its raw connection is left.
        if (killed) server.raw.close()
        else await server.stop()
      }
    }
  })
}

test('a worker fenced out after an upgrade rejects its run with the typed fence error', async () => {
  const server = await startRedis()
  try {
    const q = uniqueQueue('fence')
    const old = await emq.connect(server.url, { wireVersion: 'echomq:2.0.0' })
    const worker = new emq.Worker(old, q, async () => {}, { idleMaxMs: 50 })
    const run = worker.run()
    await waitFor(async () => (await server.raw.cmd('GET', '{emq}:version')) === 'echomq:2.0.0', 10000, 'fenced at 2.0.0')
    // What `emq upgrade --yes` ends with (the probes aside): the record
    // moves on; old connections work until they reconnect: make them.
    await server.raw.cmd('SET', '{emq}:version', 'echomq:2.1.0')
    await server.raw.cmd('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
    await assert.rejects(run, (e) => {
      assert.equal(e.code, 'EMQ_VERSION_FENCE', String(e))
      return true
    })
    assert.ok(worker.stats().claimFailures <= 3, JSON.stringify(worker.stats()))
    // A producer's refusal stays typed.
    await assert.rejects(old.enqueue(q, 'late'), (e) => e.code === 'EMQ_VERSION_FENCE')
    await old.close()
  } finally {
    await server.stop()
  }
})

test('a call against a server that is gone fails within the connect timeout, typed', async () => {
  // The defaults: connect timeout 5 s, response timeout 30 s (issue #39 §3).
  const server = await startRedis()
  const client = await emq.connect(server.url)
  await client.enqueue(uniqueQueue('gone'), 'x')
  await server.stop()
  const codes = []
  for (let call = 0; call < 3; call++) {
    const started = Date.now()
    const err = await client.counts('gone').then(() => null, (e) => e)
    const took = Date.now() - started
    console.log(`call ${call} with the server gone: ${err && err.code} after ${took} ms`)
    assert.ok(err, 'the call failed')
    assert.ok(took < 15000, `call ${call} took ${took} ms`)
    codes.push(err.code)
  }
  assert.ok(['EMQ_CONNECTION', 'EMQ_UNAVAILABLE'].includes(codes[0]), codes.join())
  assert.deepEqual(codes.slice(1), ['EMQ_UNAVAILABLE', 'EMQ_UNAVAILABLE'])
  await client.close()
})
