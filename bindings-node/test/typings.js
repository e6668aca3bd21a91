// What index.d.ts declares, as TypeScript itself reads it (the compiler API of
// the typescript devDependency): `Client` and `Queue` are partly derived from
// native.d.ts by mapped types, so their members are the checker's, not text.
'use strict'
const { join } = require('node:path')
const ts = require('typescript')
const { PKG } = require('./helpers')

const OPTIONS = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
  module: ts.ModuleKind.Node16,
  moduleResolution: ts.ModuleResolutionKind.Node16,
  types: ['node'],
  typeRoots: [join(PKG, 'node_modules', '@types')],
  skipLibCheck: false,
}

const FORMAT = ts.TypeFormatFlags.NoTruncation

/**
 * Load a declaration file (and what it imports): `{diagnostics, classes(name)}`.
 * `classes(name)` answers the instance members of an exported class (with its
 * merged interfaces): `name` → {
 *   from: the file that declares the member ('index.d.ts', 'native.d.ts'),
 *   signatures: [{params: [{name, type, optional}], returns}] (one per overload),
 *   doc: its JSDoc text,
 * }.
 */
function load(file = join(PKG, 'index.d.ts')) {
  const program = ts.createProgram([file], OPTIONS)
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)
  const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(source))
  const diagnostics = ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n') + (d.file ? ` (${d.file.fileName})` : ''))

  const show = (type) => checker.typeToString(type, undefined, FORMAT)

  /** One parameter; a rest parameter of a tuple type (a derived verb's `...args`) as its elements. */
  function parameters(p) {
    const decl = p.valueDeclaration
    const type = checker.getTypeOfSymbolAtLocation(p, source)
    if (decl && decl.dotDotDotToken && checker.isTupleType(type)) {
      const { labeledElementDeclarations: labels = [], elementFlags } = type.target
      return checker.getTypeArguments(type).map((element, i) => ({
        name: labels[i] ? labels[i].name.getText() : `arg${i}`,
        type: show(element),
        optional: !!(elementFlags[i] & ts.ElementFlags.Optional),
      }))
    }
    const optional = decl ? !!(decl.questionToken || decl.initializer) : !!(p.flags & ts.SymbolFlags.Optional)
    return [{ name: p.name, type: show(type), optional }]
  }

  function members(className) {
    const symbol = exports.find((e) => e.name === className)
    if (!symbol) throw new Error(`${file} exports no ${className}`)
    const type = checker.getDeclaredTypeOfSymbol(symbol)
    const out = new Map()
    for (const property of checker.getPropertiesOfType(type)) {
      const name = property.name.startsWith('__@') ? `[Symbol.${property.name.slice(3).split('@')[0]}]` : property.name
      const declarations = property.declarations || []
      const from = [...new Set(declarations.map((d) => d.getSourceFile().fileName.split('/').pop()))].join(',')
      const t = checker.getTypeOfSymbolAtLocation(property, source)
      const signatures = t.getCallSignatures().map((sig) => ({
        params: sig.parameters.flatMap((p) => parameters(p)),
        returns: checker.typeToString(sig.getReturnType(), undefined, FORMAT),
      }))
      const doc = ts.displayPartsToString(property.getDocumentationComment(checker))
      out.set(name, { from, signatures, doc, type: show(t) })
    }
    return out
  }
  return { diagnostics, members }
}

module.exports = { load }
