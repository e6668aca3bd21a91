// Type declarations of the ES module entry (`import ... from 'echomq'`,
// index.mjs): the declarations of index.d.ts, as an ES module, plus the
// default export index.mjs has (the whole module). TypeScript resolving the
// `import` condition reads this file, so ESM users get ESM types, not the
// CommonJS entry's (test/exports.test.js checks that index.js, index.mjs and
// both declaration files name the same exports).
import * as echomq from './index.js'

export * from './index.js'
export default echomq
