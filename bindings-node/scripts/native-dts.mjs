#!/usr/bin/env node
// Render native.d.ts from the type definitions napi-derive wrote while the
// addon compiled (NAPI_TYPE_DEF_TMP_FOLDER), the way `napi build --dts` does,
// for builds that run cargo themselves (scripts/dist.sh's zigbuild): the
// committed file is checked against the addon that ships without a second
// whole-tree build just for the declarations.
//
//   node scripts/native-dts.mjs TYPE_DEF_DIR > native.d.ts
import { generateTypeDef } from '@napi-rs/cli'

const dir = process.argv[2]
if (!dir) {
  console.error('usage: node scripts/native-dts.mjs TYPE_DEF_DIR')
  process.exit(2)
}
const { dts } = await generateTypeDef({ typeDefDir: dir, cwd: process.cwd() })
if (!dts.includes('export declare class NativeClient')) {
  console.error(`native-dts: ${dir} holds no type definitions of the addon (was echomq-node compiled with NAPI_TYPE_DEF_TMP_FOLDER set?)`)
  process.exit(1)
}
process.stdout.write(dts)
