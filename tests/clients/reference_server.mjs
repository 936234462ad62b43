#!/usr/bin/env node
// Reference SEP-2640 skills server for differential tests: the TypeScript SDK's
// own implementation (@modelcontextprotocol/server@2.4.0, SkillCatalog) serving
// a small fixture. Run it with the Node 22 binary from scripts/install-test-tools.sh
// ($SKILLREG_NODE22, see <tools>/env.sh); packages are loaded from $SKILLREG_TOOLS
// (default <repo>/.tools).
//
//   $SKILLREG_NODE22 tests/clients/reference_server.mjs --http 0        # prints "listening http://127.0.0.1:PORT/mcp"
//   $SKILLREG_NODE22 tests/clients/reference_server.mjs --stdio         # MCP over stdin/stdout (both eras)
//   $SKILLREG_NODE22 tests/clients/reference_server.mjs --write-fixture DIR   # write the built-in fixture to DIR and exit
//
// Options:
//   --http PORT        Streamable HTTP on 127.0.0.1:PORT at /mcp (0 = pick a free port). createMcpHandler
//                      serves 2026-07-28 (stateless) and falls back to stateless 2025-era serving.
//   --stdio            serveStdio(): the opening message picks the era (initialize -> 2025-11-25,
//                      server/discover -> 2026-07-28).
//   --dir DIR          serve skills from a folder of skill folders instead of the built-in fixture
//                      (e.g. the same fixture the Rust server serves).
//   --page-size N      skills/list and directory page size (default 2).
//   --ttl-ms N         cacheHint ttlMs (default 60000); --cache-scope public|private (default public).
//   --prefix P         organisational prefix: skill://P/<skill>/... (default none).
//
// On HTTP the first stdout line is "listening <url>"; everything else goes to stderr.

import { createServer } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { importTool } from './_tools.mjs';

/** The built-in fixture: 5 small skills; alpha-docs (first by URI) has subdirectories, beta-binary a non-UTF-8 file. */
export function fixtureFiles() {
    const png = Uint8Array.from([
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49,
        0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d,
        0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
    ]);
    return {
        'alpha-docs/SKILL.md':
            '---\nname: alpha-docs\ndescription: Writes and reviews project documentation. Use when asked for docs.\n---\n' +
            '# Alpha docs\n\nSee [the guide](references/GUIDE.md) and run `scripts/check.sh`.\n',
        'alpha-docs/references/GUIDE.md': '# Guide\n\nKeep sentences short.\n',
        'alpha-docs/references/examples/intro.md': '# Intro example\n\nHello.\n',
        'alpha-docs/scripts/check.sh': '#!/bin/sh\necho ok\n',
        'beta-binary/SKILL.md':
            '---\nname: beta-binary\ndescription: Ships a small binary asset.\nlicense: Apache-2.0\n---\n# Beta\n\nThe logo is assets/logo.png.\n',
        'beta-binary/assets/logo.png': png,
        'delta-unicode/SKILL.md':
            '---\nname: delta-unicode\ndescription: "Cafés, naïve façades and clefs \\U0001D11E: non-ASCII text."\n---\n' +
            '# Delta ☕\n\nÜnïcödé body, CJK 漢字, emoji 🎉.\n',
        'delta-unicode/notes/read me.md': 'A file name with a space.\n',
        'epsilon-minimal/SKILL.md': '---\nname: epsilon-minimal\ndescription: Smallest skill, with one empty file.\n---\n',
        'epsilon-minimal/EMPTY.txt': '',
        'gamma-meta/SKILL.md':
            '---\nname: gamma-meta\ndescription: >\n  Exercises optional frontmatter fields,\n  folded over two lines.\n' +
            'license: MIT\ncompatibility: Requires git and a POSIX shell\nallowed-tools: Bash(git:*) Read\n' +
            'metadata:\n  author: skillreg\n  version: "1.0"\n---\n# Gamma\n\nBody.\n'
    };
}

function parseArgs(argv) {
    const options = { pageSize: 2, ttlMs: 60000, cacheScope: 'public' };
    for (let index = 0; index < argv.length; index++) {
        const arg = argv[index];
        const value = () => {
            if (index + 1 >= argv.length) throw new Error(`${arg} needs a value`);
            return argv[++index];
        };
        if (arg === '--http') options.http = Number(value());
        else if (arg === '--stdio') options.stdio = true;
        else if (arg === '--dir') options.dir = value();
        else if (arg === '--page-size') {
            const size = value();
            options.pageSize = size === 'Infinity' ? Infinity : Number(size);
        }
        else if (arg === '--ttl-ms') options.ttlMs = Number(value());
        else if (arg === '--cache-scope') options.cacheScope = value();
        else if (arg === '--prefix') options.prefix = value();
        else if (arg === '--write-fixture') options.writeFixture = value();
        else if (arg === '--help' || arg === '-h') options.help = true;
        else throw new Error(`unknown argument ${arg}`);
    }
    return options;
}

function writeFixture(root) {
    for (const [path, content] of Object.entries(fixtureFiles())) {
        const target = join(root, ...path.split('/'));
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, content);
    }
}

/** node:http <-> fetch-API bridge for createMcpHandler (no @modelcontextprotocol/node needed). */
async function toWebRequest(req, origin) {
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) for (const item of value) headers.append(key, item);
        else if (value !== undefined) headers.set(key, value);
    }
    let body;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        body = Buffer.concat(chunks);
    }
    return new Request(new URL(req.url, origin), { method: req.method, headers, body });
}

async function sendWebResponse(response, res) {
    const headers = {};
    response.headers.forEach((value, key) => {
        headers[key] = value;
    });
    res.writeHead(response.status, headers);
    if (response.body === null) {
        res.end();
        return;
    }
    const reader = response.body.getReader();
    res.on('close', () => reader.cancel().catch(() => {}));
    for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
    }
    res.end();
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    if (options.help) {
        process.stdout.write('usage: reference_server.mjs (--http PORT | --stdio | --write-fixture DIR) [--dir DIR] [--page-size N] [--ttl-ms N] [--cache-scope S] [--prefix P]\n');
        return;
    }
    if (options.writeFixture !== undefined) {
        writeFixture(options.writeFixture);
        process.stderr.write(`fixture written to ${options.writeFixture}\n`);
        return;
    }
    if ((options.http === undefined) === (options.stdio === undefined)) throw new Error('pass exactly one of --http PORT, --stdio');

    const { McpServer, createMcpHandler } = await importTool('@modelcontextprotocol/server');
    const { SkillCatalog, memorySkillFiles } = await importTool('@modelcontextprotocol/server/ext/skills');
    const catalogOptions = {
        pageSize: options.pageSize,
        cacheHint: { ttlMs: options.ttlMs, cacheScope: options.cacheScope },
        ...(options.prefix !== undefined && { prefix: options.prefix }),
        onWarning: (warning) => process.stderr.write(`catalog warning: ${warning.path}: ${warning.message}\n`)
    };
    let catalog;
    if (options.dir !== undefined) {
        const { loadSkills } = await importTool('@modelcontextprotocol/server/ext/skills/node');
        catalog = await loadSkills(options.dir, catalogOptions);
    } else {
        catalog = await SkillCatalog.load(memorySkillFiles(fixtureFiles()), catalogOptions);
    }
    process.stderr.write(`reference server: ${catalog.entries.length} skills: ${catalog.entries.map((s) => s.uri).join(' ')}\n`);

    const factory = () => {
        const server = new McpServer({ name: 'skillreg-reference', version: '2.4.0' });
        catalog.attach(server);
        return server;
    };

    if (options.stdio) {
        const { serveStdio } = await importTool('@modelcontextprotocol/server/stdio');
        serveStdio(factory, { onerror: (error) => process.stderr.write(`stdio error: ${error.message}\n`) });
        return;
    }

    const handler = createMcpHandler(factory);
    const http = createServer((req, res) => {
        const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
        const path = new URL(req.url, origin).pathname;
        if (path !== '/mcp') {
            res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
            return;
        }
        toWebRequest(req, origin)
            .then((request) => handler.fetch(request))
            .then((response) => sendWebResponse(response, res))
            .catch((error) => {
                process.stderr.write(`http error: ${error?.stack ?? error}\n`);
                if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
                res.end();
            });
    });
    http.listen(options.http, '127.0.0.1', () => {
        const { port } = http.address();
        process.stdout.write(`listening http://127.0.0.1:${port}/mcp\n`);
    });
    const stop = () => {
        http.close();
        handler.close().finally(() => process.exit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
}

main().catch((error) => {
    process.stderr.write(`reference_server: ${error?.stack ?? error}\n`);
    process.exit(2);
});
