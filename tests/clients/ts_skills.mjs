#!/usr/bin/env node
// External SEP-2640 client check with the TypeScript SDK's SkillsClient
// (@modelcontextprotocol/client@2.4.0). Run it with the Node 22 binary that
// scripts/install-test-tools.sh installs ($SKILLREG_NODE22 in <tools>/env.sh);
// packages are loaded from $SKILLREG_TOOLS (default <repo>/.tools).
//
//   $SKILLREG_NODE22 tests/clients/ts_skills.mjs [--era auto|legacy|modern] --url http://127.0.0.1:PORT/mcp
//   $SKILLREG_NODE22 tests/clients/ts_skills.mjs [--era auto|legacy|modern] --stdio CMD [ARGS...]
//
// --era auto   (default) versionNegotiation {mode:'auto'}: server/discover probe, 2026-07-28 if offered,
//              otherwise falls back to initialize.
// --era legacy  plain 2025-era initialize (2025-11-25).
// --era modern  versionNegotiation {mode:{pin:'2026-07-28'}}: no fallback.
// Everything after --stdio is the server command line, so --stdio must come last. The server
// process inherits this process's whole environment and stderr.
//
// It lists every skill (SkillsClient.list() walks nextCursor to the end; invalid entries are
// reported, not thrown, via skipInvalid), reads every file of every skill with SkillsClient.read()
// (which checks the file is listed, its size and sha256 digest, and for SKILL.md that the
// frontmatter equals the entry's), and reads the first skill's root directory when the server
// declares directoryRead. It prints ONE JSON object on stdout:
//   { era, pages, pageSizes, skills: [uri], files: [{uri, size, sha256, encoding, mimeType}],
//     failures: [{uri, error}], ttlMs, cacheScope, directoryRead, firstRootChildren: [{uri, name, mimeType}] | null }
// sha256 is lowercase hex (no "sha256:" prefix) of the bytes received. Exit code 0 when there are
// no failures, 1 otherwise, 2 on a usage error.

import { createHash } from 'node:crypto';
import { importTool } from './_tools.mjs';

function usage(message) {
    process.stderr.write(`ts_skills: ${message}\nusage: ts_skills.mjs [--era auto|legacy|modern] (--url URL | --stdio CMD [ARGS...])\n`);
    process.exit(2);
}

function parseArgs(argv) {
    const options = { era: 'auto' };
    for (let index = 0; index < argv.length; index++) {
        const arg = argv[index];
        if (arg === '--url') options.url = argv[++index];
        else if (arg === '--era') options.era = argv[++index];
        else if (arg === '--stdio') {
            options.stdio = argv.slice(index + 1);
            break;
        } else usage(`unknown argument ${arg}`);
    }
    if (!['auto', 'legacy', 'modern'].includes(options.era)) usage(`--era must be auto, legacy or modern, not ${options.era}`);
    if ((options.url === undefined) === (options.stdio === undefined)) usage('pass exactly one of --url URL, --stdio CMD [ARGS...]');
    if (options.stdio !== undefined && options.stdio.length === 0) usage('--stdio needs a command');
    return options;
}

const errorText = (error) => {
    if (!(error instanceof Error)) return String(error);
    const reason = typeof error.reason === 'string' ? `${error.reason}: ` : '';
    return `${error.name}: ${reason}${error.message}`;
};

async function main() {
    const options = parseArgs(process.argv.slice(2));
    const { Client, StreamableHTTPClientTransport } = await importTool('@modelcontextprotocol/client');
    const { SkillsClient } = await importTool('@modelcontextprotocol/client/ext/skills');

    const clientOptions =
        options.era === 'auto'
            ? { versionNegotiation: { mode: 'auto' } }
            : options.era === 'modern'
              ? { versionNegotiation: { mode: { pin: '2026-07-28' } } }
              : {};
    const client = new Client({ name: 'skillreg-ts-skills', version: '0.0.0' }, clientOptions);

    let transport;
    if (options.url !== undefined) {
        transport = new StreamableHTTPClientTransport(new URL(options.url));
    } else {
        const { StdioClientTransport } = await importTool('@modelcontextprotocol/client/stdio');
        const [command, ...args] = options.stdio;
        // The SDK passes only a few default variables to the child; pass the whole environment so
        // the server under test sees SKILLREG_*, RUST_LOG and the like.
        transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' });
    }

    const report = {
        era: null,
        pages: 0,
        pageSizes: [],
        skills: [],
        files: [],
        failures: [],
        ttlMs: null,
        cacheScope: null,
        directoryRead: false,
        firstRootChildren: null
    };

    // Count skills/list pages as SkillsClient walks them (it calls client.request once per page).
    const request = client.request.bind(client);
    client.request = async (req, ...rest) => {
        const result = await request(req, ...rest);
        if (req?.method === 'skills/list') {
            report.pages++;
            report.pageSizes.push(Array.isArray(result?.skills) ? result.skills.length : null);
        }
        return result;
    };

    try {
        await client.connect(transport);
        report.era = client.getNegotiatedProtocolVersion() ?? null;
        const skills = new SkillsClient(client, { skipInvalid: true });
        if (!skills.supported) throw new Error('the server does not declare the io.modelcontextprotocol/skills extension');
        report.directoryRead = skills.directoryRead;

        const listing = await skills.list();
        report.ttlMs = listing.ttlMs ?? null;
        report.cacheScope = listing.cacheScope ?? null;
        for (const invalid of listing.invalid) {
            report.failures.push({ uri: invalid.uri ?? null, error: `invalid skills/list entry #${invalid.index}: ${invalid.reason}` });
        }

        for (const skill of listing.skills) {
            report.skills.push(skill.uri);
            const targets = skill.resources === 'dynamic' ? [skill.uri] : skill.resources.map((resource) => resource.uri);
            for (const uri of targets) {
                try {
                    const file = await skills.read(skill, uri);
                    report.files.push({
                        uri: file.uri,
                        size: file.bytes.byteLength,
                        sha256: createHash('sha256').update(file.bytes).digest('hex'),
                        encoding: file.text === undefined ? 'blob' : 'text',
                        mimeType: file.mimeType ?? null,
                        ...(file.verified === false && { verified: false })
                    });
                } catch (error) {
                    report.failures.push({ uri, error: errorText(error) });
                }
            }
        }

        if (listing.skills.length > 0 && skills.directoryRead) {
            const root = listing.skills[0].uri.replace(/\/SKILL\.md$/, '');
            try {
                const directory = await skills.readDirectory(root);
                report.firstRootChildren = directory.resources.map((resource) => ({
                    uri: resource.uri,
                    name: resource.name,
                    mimeType: resource.mimeType ?? null
                }));
            } catch (error) {
                report.failures.push({ uri: root, error: `resources/directory/read: ${errorText(error)}` });
            }
        }
    } catch (error) {
        report.failures.push({ uri: null, error: errorText(error) });
    } finally {
        await client.close().catch(() => {});
    }

    // process.exit() would cut a large report short on a pipe: let the write drain first.
    process.exitCode = report.failures.length > 0 ? 1 : 0;
    process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit());
}

main().catch((error) => {
    process.stderr.write(`ts_skills: ${error?.stack ?? error}\n`);
    process.exit(1);
});
