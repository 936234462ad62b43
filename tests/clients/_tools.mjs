// Shared helper for the Node test clients and the reference server: finds the
// test-tools prefix that scripts/install-test-tools.sh fills, and imports npm
// packages from it as ES modules.
//
// NODE_PATH does not apply to ESM `import`, so bare specifiers such as
// '@modelcontextprotocol/client/ext/skills' cannot be imported from this
// directory. Instead the package's `exports` map is read and the ESM entry
// file is imported by absolute file URL. Bare imports *inside* that file
// (zod, @modelcontextprotocol/core, ...) then resolve normally, because the
// file lives in <tools>/node/node_modules.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** `$SKILLREG_TOOLS`, or `<repo>/.tools` (this file is `<repo>/tests/clients/_tools.mjs`). */
export const toolsDir = resolve(process.env.SKILLREG_TOOLS || join(here, '..', '..', '.tools'));
export const nodeModules = join(toolsDir, 'node', 'node_modules');

function pickTarget(entry) {
    if (typeof entry === 'string') return entry;
    if (entry === null || typeof entry !== 'object') return undefined;
    for (const condition of ['node', 'import', 'default']) {
        if (condition in entry) {
            const target = pickTarget(entry[condition]);
            if (target !== undefined) return target;
        }
    }
    return undefined;
}

/** Absolute path of the ESM entry point for `specifier` (e.g. '@modelcontextprotocol/client/stdio'). */
export function resolveTool(specifier) {
    const parts = specifier.split('/');
    const nameLength = specifier.startsWith('@') ? 2 : 1;
    const name = parts.slice(0, nameLength).join('/');
    const subpath = ['.', ...parts.slice(nameLength)].join('/');
    const packageDir = join(nodeModules, ...name.split('/'));
    const manifestPath = join(packageDir, 'package.json');
    if (!existsSync(manifestPath)) {
        throw new Error(
            `${name} is not installed under ${nodeModules}; run scripts/install-test-tools.sh ` +
                `(or set SKILLREG_TOOLS to the prefix it filled)`
        );
    }
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    let target;
    if (manifest.exports !== undefined) {
        const exportsMap = typeof manifest.exports === 'string' ? { '.': manifest.exports } : manifest.exports;
        target = pickTarget(exportsMap[subpath]);
    } else if (subpath === '.') {
        target = manifest.module ?? manifest.main ?? 'index.js';
    } else {
        target = subpath;
    }
    if (target === undefined) throw new Error(`${name} does not export ${subpath}`);
    return join(packageDir, target);
}

/** `import()` of a package installed in the tools prefix. */
export function importTool(specifier) {
    return import(pathToFileURL(resolveTool(specifier)).href);
}
