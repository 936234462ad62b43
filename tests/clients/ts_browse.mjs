#!/usr/bin/env node
// Browse a skills server the way a host does with the official TypeScript client
// (@modelcontextprotocol/client@2.4.0): resource templates, completion for each variable with and
// without context, a read of a resolved template URI, the search_skills tool, and
// skill://index.json. Prints one JSON object; the Rust test asserts on it.
//
//   $SKILLREG_NODE22 tests/clients/ts_browse.mjs --url URL [--era auto|legacy] --namespace NS --name NAME --query TEXT

import { importTool } from './_tools.mjs';

function arg(name, fallback) {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : fallback;
}

async function main() {
    const { Client, StreamableHTTPClientTransport } = await importTool('@modelcontextprotocol/client');
    const era = arg('era', 'auto');
    const client = new Client(
        { name: 'skillreg-ts-browse', version: '0.0.0' },
        era === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {}
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(arg('url'))));
    const ns = arg('namespace');
    const name = arg('name');
    const report = { era: client.getNegotiatedProtocolVersion() ?? null };

    const templates = await client.listResourceTemplates();
    report.templates = templates.resourceTemplates.map((t) => t.uriTemplate);
    const skillTemplate = report.templates.find((t) => t.endsWith('/{name}/SKILL.md') && !t.includes('@'));
    const fileTemplate = report.templates.find((t) => t.endsWith('{+path}') && !t.includes('@'));
    const pinnedTemplate = report.templates.find((t) => t.includes('@{version}') && t.endsWith('SKILL.md'));
    const complete = async (uri, argument, value, context) =>
        (
            await client.complete({
                ref: { type: 'ref/resource', uri },
                argument: { name: argument, value },
                ...(context ? { context: { arguments: context } } : {})
            })
        ).completion;
    report.completion = {
        namespace: await complete(skillTemplate, 'namespace', ns.slice(0, 2)),
        nameInNamespace: await complete(skillTemplate, 'name', name.slice(0, 3), { namespace: ns }),
        nameAnywhere: await complete(skillTemplate, 'name', name.slice(0, 3)),
        path: await complete(fileTemplate, 'path', '', { namespace: ns, name }),
        version: await complete(pinnedTemplate, 'version', '', { namespace: ns, name })
    };
    // Resolve the template the way a host would, then read it.
    const resolved = skillTemplate.replace('{namespace}', ns).replace('{name}', name);
    const read = await client.readResource({ uri: resolved });
    report.resolved = { uri: resolved, mimeType: read.contents[0].mimeType, startsWithFrontmatter: read.contents[0].text.startsWith('---') };

    const tools = await client.listTools();
    report.tools = tools.tools.map((t) => t.name);
    const search = await client.callTool({ name: 'search_skills', arguments: { query: arg('query'), limit: 5 } });
    report.search = { isError: search.isError ?? false, hits: search.structuredContent?.hits ?? null };

    const index = await client.readResource({ uri: 'skill://index.json' });
    report.index = JSON.parse(index.contents[0].text);
    await client.close();
    process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
}

main().catch((error) => {
    process.stderr.write(`ts_browse: ${error?.stack ?? error}\n`);
    process.exit(1);
});
