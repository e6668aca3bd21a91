// `npm pack` → install the tarball into a fresh project → require / import it.
// The tarball carries the .node built for this platform (see docs/NODE.md).
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { execFileSync, spawnSync } = require('node:child_process')
const { mkdtempSync, writeFileSync, rmSync, readdirSync, existsSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { startRedis, PKG } = require('./helpers')
const { triple } = require('../native.js')

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
let server, dir
before(async () => {
  server = await startRedis()
  dir = mkdtempSync(join(tmpdir(), 'echomq-pack-'))
})
after(async () => {
  if (server) await server.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

test('npm pack includes the platform binary, and the tarball installs and works elsewhere', () => {
  const packed = JSON.parse(
    execFileSync(npm, ['pack', '--json', '--pack-destination', dir], { cwd: PKG, encoding: 'utf8' })
  )[0]
  const files = packed.files.map((f) => f.path).sort()
  assert.ok(files.includes(`echomq.${triple()}.node`), files.join(' '))
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'native.d.ts', 'native.js', 'package.json', 'scripts/install.js', 'bin/emq.js']) {
    assert.ok(files.includes(f), f)
  }
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/') || f.endsWith('.rs')), files.join(' '))
  const tgz = join(dir, packed.filename)

  const app = join(dir, 'app')
  execFileSync('mkdir', ['-p', app])
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }))
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--offline', tgz], { cwd: app, stdio: 'pipe' })
  assert.ok(existsSync(join(app, 'node_modules', 'echomq', `echomq.${triple()}.node`)))
  assert.ok(!readdirSync(join(app, 'node_modules')).includes('@napi-rs'), 'no build tooling installed')

  const cjs = spawnSync(
    process.execPath,
    [
      '-e',
      `const { connect, ErrorCode } = require('echomq')
       connect(process.env.URL).then(async (c) => {
         const e = await c.enqueue('packed', Buffer.from('from the tarball'))
         const j = await c.claim('packed', 1000)
         await c.complete('packed', j.id, j.token)
         await c.close()
         console.log(JSON.stringify({ same: e.id === j.id, payload: j.payload.toString(), stale: ErrorCode.STALE }))
       })`,
    ],
    { cwd: app, env: { ...process.env, URL: server.url }, encoding: 'utf8', timeout: 15000 }
  )
  assert.equal(cjs.status, 0, cjs.stderr)
  assert.deepEqual(JSON.parse(cjs.stdout), { same: true, payload: 'from the tarball', stale: 'EMQSTALE' })

  const esm = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { connect, protocolVersion } from 'echomq'
       const c = await connect(process.env.URL)
       console.log(protocolVersion(), (await c.counts('packed')).completed)
       await c.close()`,
    ],
    { cwd: app, env: { ...process.env, URL: server.url }, encoding: 'utf8', timeout: 15000 }
  )
  assert.equal(esm.status, 0, esm.stderr)
  assert.equal(esm.stdout.trim(), 'echomq:2.1.0 1')

  // The installed declarations type-check as a user compiles against them:
  // index.d.ts derives Client and Queue from the napi declarations it ships
  // (native.d.ts), so a plain verb is typed on both.
  writeFileSync(
    join(app, 'typed.ts'),
    `import { connect, type Counts, type Job } from 'echomq'
     export async function main(): Promise<void> {
       await using client = await connect()
       const q = client.queue('packed')
       const found: boolean = await q.exists('JOB0000000000001')
       const job: Job | null = await q.claim(1000)
       const counts: Counts = await client.counts('packed')
       console.log(found, job?.attempts, counts.completed)
     }
     // @ts-expect-error: a queue handle takes no queue name
     export const wrong = (c: import('echomq').Client) => c.queue('packed').exists('packed', 'id')
    `
  )
  const tsc = spawnSync(
    process.execPath,
    [
      join(PKG, 'node_modules', 'typescript', 'bin', 'tsc'),
      '--noEmit', '--strict', '--skipLibCheck', 'false',
      '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--lib', 'es2022,esnext.disposable',
      '--types', 'node', '--typeRoots', join(PKG, 'node_modules', '@types'),
      'typed.ts',
    ],
    { cwd: app, encoding: 'utf8', timeout: 60000 }
  )
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr)

  // The operator's command ships as the package's bin: `npx emq`.
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx'
  const version = spawnSync(npx, ['--offline', 'emq', '--version'], { cwd: app, encoding: 'utf8', timeout: 30000 })
  assert.equal(version.status, 0, version.stderr)
  assert.match(version.stdout, /^emq \d+\.\d+\.\d+ \(wire echomq:2\.1\.0\)$/m)
  const stats = spawnSync(npx, ['--offline', 'emq', '--json', 'stats', 'packed'], {
    cwd: app,
    env: { ...process.env, EMQ_URL: server.url },
    encoding: 'utf8',
    timeout: 30000,
  })
  assert.equal(stats.status, 0, stats.stderr)
  assert.equal(JSON.parse(stats.stdout)[0].completed, 1)
  const refused = spawnSync(npx, ['--offline', 'emq', 'job', 'packed', 'nope'], { cwd: app, encoding: 'utf8', timeout: 30000 })
  assert.equal(refused.status, 1)
  assert.match(refused.stderr, /^emq: invalid branded id/)
})
