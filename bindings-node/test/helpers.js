// Test helpers: a throwaway redis-server per test file, and a tiny RESP client
// for asserting wire state with raw commands (no dependency).
'use strict'
const { spawn } = require('node:child_process')
const net = require('node:net')
const { join } = require('node:path')
const { appendFileSync } = require('node:fs')

const PKG = join(__dirname, '..')

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

/**
 * Start `redis-server` on a free port; resolves to {url, port, raw, stop}.
 * The port is only free when we looked: if a sibling's server takes it first,
 * ours exits (or the answer comes from theirs, which INFO's process_id tells
 * apart), and we try another port.
 */
async function startRedis() {
  for (let attempt = 0; attempt < 20; attempt++) {
    const started = await startOwnRedis(await freePort())
    if (started) return started
  }
  throw new Error('redis-server did not start on a free port in 20 tries')
}

async function startOwnRedis(port) {
  // $EMQ_TEST_SERVER (e.g. scripts/test.sh's valkey-server), as the Rust harness.
  const proc = spawn(
    (process.env.EMQ_TEST_SERVER || '').trim() || 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
    { stdio: 'ignore' }
  )
  if (process.env.EMQ_TEST_PIDFILE) appendFileSync(process.env.EMQ_TEST_PIDFILE, `${proc.pid}\n`)
  const killOnExit = () => proc.kill('SIGKILL')
  process.once('exit', killOnExit)
  let raw
  for (let i = 0; i < 400 && proc.exitCode === null; i++) {
    try {
      raw = await rawClient(port)
      const info = await raw.cmd('INFO', 'server')
      if (info.includes(`process_id:${proc.pid}\r\n`)) break
      raw.close()
      raw = undefined
      break // another process answers on this port
    } catch {
      raw = undefined
      await sleep(25)
    }
  }
  if (!raw) {
    process.removeListener('exit', killOnExit)
    if (proc.exitCode === null) {
      proc.kill('SIGKILL')
      await new Promise((r) => proc.once('exit', r))
    }
    return null
  }
  const stop = async () => {
    process.removeListener('exit', killOnExit)
    raw.close()
    if (proc.exitCode === null) {
      proc.kill('SIGTERM')
      await new Promise((r) => proc.once('exit', r))
    }
  }
  return { url: `redis://127.0.0.1:${port}/`, port, raw, stop }
}

/** A minimal RESP2 client: `await c.cmd('HGETALL', key)`; bulk strings → string (or Buffer with cmdBuf). */
function rawClient(port) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    const waiting = []
    sock.on('error', (e) => {
      reject(e)
      while (waiting.length) waiting.shift().reject(e)
    })
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk])
      for (;;) {
        const parsed = parse(buf, 0)
        if (!parsed) break
        buf = buf.subarray(parsed.end)
        const w = waiting.shift()
        if (parsed.value instanceof Error) w.reject(parsed.value)
        else w.resolve(w.asBuffer ? parsed.value : toText(parsed.value))
      }
    })
    sock.on('connect', () => {
      const send = (asBuffer, args) =>
        new Promise((res, rej) => {
          waiting.push({ resolve: res, reject: rej, asBuffer })
          const parts = [Buffer.from(`*${args.length}\r\n`)]
          for (const a of args) {
            const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a))
            parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'))
          }
          sock.write(Buffer.concat(parts))
        })
      resolve({
        cmd: (...args) => send(false, args),
        cmdBuf: (...args) => send(true, args),
        close: () => sock.destroy(),
      })
    })
  })
}

function toText(v) {
  if (Buffer.isBuffer(v)) return v.toString('utf8')
  if (Array.isArray(v)) return v.map(toText)
  return v
}

function parse(buf, at) {
  const nl = buf.indexOf('\r\n', at)
  if (nl < 0) return null
  const type = String.fromCharCode(buf[at])
  const line = buf.toString('utf8', at + 1, nl)
  const next = nl + 2
  switch (type) {
    case '+':
      return { value: line, end: next }
    case '-':
      return { value: new Error(line), end: next }
    case ':':
      return { value: Number(line), end: next }
    case '$': {
      const n = Number(line)
      if (n < 0) return { value: null, end: next }
      if (buf.length < next + n + 2) return null
      return { value: buf.subarray(next, next + n), end: next + n + 2 }
    }
    case '*': {
      const n = Number(line)
      if (n < 0) return { value: null, end: next }
      const out = []
      let pos = next
      for (let i = 0; i < n; i++) {
        const item = parse(buf, pos)
        if (!item) return null
        out.push(item.value)
        pos = item.end
      }
      return { value: out, end: pos }
    }
    default:
      throw new Error(`RESP: unexpected type byte ${type}`)
  }
}

/** HGETALL reply → object. */
function hash(flat) {
  const out = {}
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1]
  return out
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Poll `fn` until it returns truthy, or fail after `ms`. */
async function waitFor(fn, ms = 10000, what = 'condition') {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

let seq = 0
/** A queue name unique to this process and call. */
const uniqueQueue = (prefix = 'q') => `${prefix}.${process.pid}.${++seq}`

module.exports = { PKG, startRedis, rawClient, hash, sleep, waitFor, uniqueQueue, freePort }
