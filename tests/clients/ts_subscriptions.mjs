#!/usr/bin/env node
// Resource subscriptions with the official TypeScript client (@modelcontextprotocol/client@2.4.0),
// on either era. Run it with $SKILLREG_NODE22; packages come from $SKILLREG_TOOLS.
//
//   ts_subscriptions.mjs --era legacy|modern --url URL [--subscribe URI]... [--refused URI]...
//
// --era legacy: a 2025-11-25 session; each --subscribe URI with resources/subscribe.
// --era modern: 2026-07-28 (pinned); one subscriptions/listen with resourcesListChanged and every
//               --subscribe URI as resourceSubscriptions.
// --refused URI (legacy): resources/subscribe must fail; the error is printed beside the error a
//               resources/read of the same URI answers.
//
// Prints JSON lines on stdout: first {"ready": true, "honored": <filter or null>, "refused":
// [{uri, subscribe: {code, message}, read: {code, message}}]}, then one line per notification
// received ({"notification": method, "uri": <uri or null>}). It ends when stdin closes (the
// test is done), printing {"done": true} after closing the client.

import { createInterface } from 'node:readline';
import { importTool } from './_tools.mjs';

function parseArgs(argv) {
    const options = { subscribe: [], refused: [] };
    for (let index = 0; index < argv.length; index++) {
        const arg = argv[index];
        if (arg === '--era') options.era = argv[++index];
        else if (arg === '--url') options.url = argv[++index];
        else if (arg === '--subscribe') options.subscribe.push(argv[++index]);
        else if (arg === '--refused') options.refused.push(argv[++index]);
        else throw new Error(`unknown argument ${arg}`);
    }
    if (!['legacy', 'modern'].includes(options.era)) throw new Error('--era legacy|modern');
    if (options.url === undefined) throw new Error('--url URL');
    return options;
}

const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const failure = (error) => ({ code: error?.code ?? null, message: String(error?.message ?? error) });

async function main() {
    const options = parseArgs(process.argv.slice(2));
    const { Client, StreamableHTTPClientTransport } = await importTool('@modelcontextprotocol/client');
    const clientOptions = options.era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
    const client = new Client({ name: 'skillreg-ts-subscriptions', version: '0.0.0' }, clientOptions);
    for (const method of ['notifications/resources/updated', 'notifications/resources/list_changed']) {
        client.setNotificationHandler(method, (notification) => {
            print({ notification: method, uri: notification.params?.uri ?? null });
        });
    }
    await client.connect(new StreamableHTTPClientTransport(new URL(options.url)));

    let honored = null;
    let subscription = null;
    if (options.era === 'legacy') {
        for (const uri of options.subscribe) await client.subscribeResource({ uri });
    } else {
        subscription = await client.listen({ resourcesListChanged: true, resourceSubscriptions: options.subscribe });
        honored = subscription.honoredFilter;
    }
    const refused = [];
    for (const uri of options.refused) {
        const entry = { uri, subscribe: null, read: null };
        try {
            await client.subscribeResource({ uri });
        } catch (error) {
            entry.subscribe = failure(error);
        }
        try {
            await client.readResource({ uri });
        } catch (error) {
            entry.read = failure(error);
        }
        refused.push(entry);
    }
    print({ ready: true, honored, refused });

    // Until the test closes stdin.
    const lines = createInterface({ input: process.stdin });
    for await (const _ of lines) {
        // Nothing is read from stdin; it only says when to stop.
    }
    if (subscription !== null) await subscription.close();
    await client.close();
    print({ done: true });
}

main().then(
    () => process.exit(0),
    (error) => {
        process.stderr.write(`ts_subscriptions: ${error?.stack ?? error}\n`);
        process.exit(1);
    }
);
