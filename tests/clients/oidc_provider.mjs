// A real OpenID provider (node's `oidc-provider`) on loopback, playing a CI's identity provider
// for the trusted publishing tests (tests/integration/trustpub.rs).
//
//   node oidc_provider.mjs [--issuer URL] [--claims JSON]
//
// Listens on 127.0.0.1 (a free port) and prints one JSON line:
//   {"issuer": …, "mint_url": …, "actions_url": …, "actions_token": …}
// then serves until stdin closes (the test holds it open).
//
// Its tokens are the provider's own: JWT access tokens of the client credentials grant, signed
// with a fresh RSA key of this process (a second instance has other keys) and published at its
// discovery document's `jwks_uri`. A test asks for one with given claims:
// - `POST mint_url` with a JSON object: the claims to put in the token, over GitHub Actions-like
//   defaults; `aud`, `exp`, `nbf` and `iat` given there replace the provider's. Answers
//   `{"jwt": …}`.
// - GitHub Actions' interface for `skillreg publish --trusted`: `GET actions_url&audience=AUD`
//   with `Authorization: bearer <actions_token>` answers `{"value": <jwt for AUD>}` with the
//   `--claims` given at start (as ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN do in a job).
//
// --issuer makes the provider call itself another issuer (a test's "unknown key": the token
// names a registered issuer but is signed by a key that issuer never published).

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

import { importTool } from './_tools.mjs';

const { default: Provider } = await importTool('oidc-provider');

const args = process.argv.slice(2);
const arg = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
};

const CLIENT_ID = 'ci';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const ACTIONS_TOKEN = randomBytes(24).toString('base64url');
const startClaims = JSON.parse(arg('--claims') ?? '{}');

// A GitHub Actions-like token's claims (each test overrides what it needs).
const defaults = {
    repository: 'acme/skills',
    repository_owner: 'acme',
    workflow_ref: 'acme/skills/.github/workflows/release.yml@refs/heads/main',
    job_workflow_ref: 'acme/skills/.github/workflows/release.yml@refs/heads/main',
    ref: 'refs/heads/main',
    sha: '0123456789abcdef0123456789abcdef01234567',
    run_id: '4242',
    environment: 'release',
};

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };

// Bind first: the issuer names the port.
const server = createServer();
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;
const issuer = arg('--issuer') ?? origin;

const provider = new Provider(issuer, {
    clients: [
        {
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
            grant_types: ['client_credentials'],
            redirect_uris: [],
            response_types: [],
            token_endpoint_auth_method: 'client_secret_post',
        },
    ],
    jwks: { keys: [jwk] },
    ttl: { ClientCredentials: 300 },
    features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
            enabled: true,
            defaultResource: () => 'urn:skillreg:test',
            getResourceServerInfo: () => ({
                scope: '',
                audience: 'skillreg',
                accessTokenFormat: 'jwt',
                accessTokenTTL: 300,
                jwt: { sign: { alg: 'RS256' } },
            }),
        },
    },
    formats: {
        customizers: {
            // The claims the test asked for, over the defaults; aud, exp, nbf, iat included.
            async jwt(_ctx, _token, jwt) {
                Object.assign(jwt.payload, defaults, asking);
            },
        },
    },
});
provider.proxy = false;

// The claims of the token being minted: the token endpoint takes no parameter of ours, so mints
// run one at a time and the JWT customizer reads them from here.
let asking = {};
let queue = Promise.resolve();

/** A token with `claims`, from the provider's own token endpoint. */
function mint(claims) {
    const run = queue.then(async () => {
        asking = claims;
        const body = new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
        });
        const res = await fetch(`${origin}/token`, { method: 'POST', body });
        const answer = await res.json();
        if (!res.ok) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(answer)}`);
        return answer.access_token;
    });
    queue = run.catch(() => {});
    return run;
}

const callback = provider.callback();
server.on('request', async (req, res) => {
    const url = new URL(req.url, origin);
    const reply = (status, value) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
    };
    try {
        if (url.pathname === '/mint' && req.method === 'POST') {
            let text = '';
            for await (const chunk of req) text += chunk;
            return reply(200, { jwt: await mint(JSON.parse(text || '{}')) });
        }
        if (url.pathname === '/github-token' && req.method === 'GET') {
            const [scheme, value] = (req.headers.authorization ?? '').split(' ');
            if (scheme?.toLowerCase() !== 'bearer' || value !== ACTIONS_TOKEN) {
                return reply(401, { message: 'bad request token' });
            }
            const audience = url.searchParams.get('audience') ?? 'skillreg';
            return reply(200, { value: await mint({ ...startClaims, aud: audience }) });
        }
    } catch (e) {
        return reply(500, { error: String(e) });
    }
    return callback(req, res);
});

process.stdout.write(
    `${JSON.stringify({
        issuer,
        mint_url: `${origin}/mint`,
        actions_url: `${origin}/github-token?api-version=2.0`,
        actions_token: ACTIONS_TOKEN,
    })}\n`
);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
