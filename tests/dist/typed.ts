// Compiled (not run) by scripts/test-dist.sh against the installed npm
// tarballs: the declarations a user gets must type this program, including
// the verbs index.d.ts derives from native.d.ts.
import { connect, type Counts, type Job } from 'echomq'

export async function main(): Promise<void> {
  await using client = await connect()
  const q = client.queue('packed')
  const found: boolean = await q.exists('JOB0000000000001')
  const job: Job | null = await q.claim(1000)
  const counts: Counts = await client.counts('packed')
  const paused: boolean = await client.isPaused('packed')
  console.log(found, job?.attempts, counts.completed, paused)
}

// @ts-expect-error: a queue handle takes no queue name
export const wrong = (c: import('echomq').Client) => c.queue('packed').exists('packed', 'id')
