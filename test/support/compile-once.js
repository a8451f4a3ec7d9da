/**
 * Compiles each module once per Jest worker instead of once per suite.
 *
 * Jest gives every suite a module registry of its own, and builds every module it loads with
 * `vm.compileFunction` in the suite's context: a suite that imports the library (Nest, TypeORM,
 * the SDKs and a few hundred files of src/mcp) compiles a few thousand modules, and the next suite
 * in the same worker compiles them all again, with the functions they ran. In a whole run that was
 * about a quarter of the suites' CPU time.
 *
 * Installed by the test environments (jest.config.js picks them), this replaces the worker's
 * `vm.compileFunction` with one that keeps a `vm.Script` per module file and text: the module's
 * function is the script's value, run in the calling suite's context. A script is compiled once
 * and may run in any number of contexts; V8 keeps the bytecode of every function it compiled, so
 * a later suite reuses what an earlier one compiled. Each suite still gets fresh module objects,
 * exports and closures in its own context, exactly as before: only the compiled code is shared.
 *
 * The script's first line is the function's header and its `lineOffset` is -1, so line and column
 * numbers (stack traces, source maps, coverage) are those of the module's own text. A module whose
 * text mentions `import(` is compiled by Jest's way as before: a script's dynamic imports would be
 * resolved by the suite that compiled it first. `MCP_TEST_COMPILE_EACH=1` turns the sharing off.
 */
'use strict';

const vm = require('node:vm');

const INSTALLED = Symbol.for('durable-mcp.test.compile-once');

/** Replaces `vm.compileFunction` in this process (once; later calls do nothing). */
function install() {
  if (process.env.MCP_TEST_COMPILE_EACH === '1' || vm.compileFunction[INSTALLED]) return;
  const compileEach = vm.compileFunction;
  /** Module file and parameter names -> its text and compiled script. */
  const scripts = new Map();

  function compileFunction(code, params = [], options = {}) {
    const { filename, parsingContext } = options;
    if (typeof code !== 'string' || !filename || !parsingContext) return compileEach.apply(vm, arguments);
    const key = `${filename}\0${params.join(',')}`;
    let entry = scripts.get(key);
    if (entry?.code !== code) {
      // Looked at once per module text: a script that imports dynamically is not kept (null).
      const script = code.includes('import(')
        ? null
        : new vm.Script(`(function (${params.join(', ')}) {\n${code}\n})`, { filename, lineOffset: -1 });
      entry = { code, script };
      scripts.set(key, entry);
    }
    return entry.script ? entry.script.runInContext(parsingContext) : compileEach.apply(vm, arguments);
  }
  compileFunction[INSTALLED] = true;
  vm.compileFunction = compileFunction;
}

module.exports = { install };
