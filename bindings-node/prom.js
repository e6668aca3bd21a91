// A prom-client hook for EchoMQ metrics (prom-client is optional: echomq never
// requires it; pass in the module you use).
//
//   const promClient = require('prom-client')
//   echomq.promClientCollector(promClient, client, ['emails'])   // default registry
//
// Each scrape reads `client.metricsText(queues)` once (the core renders it)
// and sets prom-client gauges and counters of the same names and labels. The
// handler-duration histogram is left out (prom-client histograms cannot be
// set from outside); scrape `metricsText` directly for it.
'use strict'

/** Parse the samples of Prometheus text: `[{name, labels, value}]`. */
function parseSamples(text) {
  const samples = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line)
    if (!m) continue
    const labels = {}
    for (const pair of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]] = pair[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return samples
}

const SERIES = [
  ['echomq_pending_jobs', 'Gauge', 'Jobs waiting to be claimed.'],
  ['echomq_active_jobs', 'Gauge', 'Jobs claimed and leased.'],
  ['echomq_scheduled_jobs', 'Gauge', 'Jobs waiting for their run-at time.'],
  ['echomq_dead_jobs', 'Gauge', 'Jobs in the dead set.'],
  ['echomq_completed_total', 'Counter', 'Jobs completed, by every runtime (metrics:completed).'],
  ['echomq_failed_total', 'Counter', 'Jobs dead-lettered, by every runtime (metrics:failed).'],
  ['echomq_worker_processed_total', 'Counter', "Jobs whose handler ended, in this process's workers."],
  ['echomq_worker_failed_total', 'Counter', "Jobs whose handler failed, in this process's workers."],
  ['echomq_worker_retried_total', 'Counter', "Failed jobs scheduled for another attempt, in this process's workers."],
]

/**
 * Register EchoMQ's series for `queues` in a prom-client registry
 * (`options.registry`, default prom-client's global one). Returns the metrics.
 */
function promClientCollector(promClient, client, queues, options = {}) {
  const registers = options.registry ? [options.registry] : undefined
  let scrape = null
  // One metricsText per scrape, shared by every series of it.
  const current = () => {
    if (!scrape) {
      scrape = client.metricsText(queues).then(parseSamples)
      scrape.finally(() => setTimeout(() => (scrape = null), 100).unref()).catch(() => {})
    }
    return scrape
  }
  return SERIES.map(([name, kind, help]) => {
    return new promClient[kind]({
      name,
      help,
      labelNames: ['queue'],
      registers,
      async collect() {
        const samples = await current()
        this.reset()
        for (const s of samples) {
          if (s.name !== name) continue
          if (kind === 'Gauge') this.set({ queue: s.labels.queue }, s.value)
          else this.inc({ queue: s.labels.queue }, s.value)
        }
      },
    })
  })
}

module.exports = { promClientCollector, parseSamples }
