// A real OAuth 2.0 authorization server for the OAuth end-to-end tests:
// `oidc-provider` (npm, OpenID Certified) on a free loopback port, with
// resource indicators (RFC 8707: a JWT access token per resource, its
// audience the resource, for any loopback resource), dynamic client
// registration, PKCE required of every client, refresh tokens for the
// clients that register the grant, and the scopes `notes:read` and `notes:write`.
//
// The person is a form: the authorization URL leads to a login page
// (`login` = the account, e.g. `alice`, which becomes the token's subject)
// and then to a consent page; each is one `<form method="post">` that the
// test's "browser" submits. The clients still do the real
// authorization-code flow with PKCE.
//
// Usage: node oidc_provider.mjs [--access-token-ttl SECONDS]
// Prints `{"issuer": "http://127.0.0.1:PORT"}` on stdout once it listens,
// then one JSON line per event the tests check (`register`, `authorize`,
// `token`); its own errors go to stderr. Ends when stdin closes.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

const RESOURCE_SCOPES = 'notes:read notes:write';

let accessTokenTtl = 3600;
for (let i = 2; i < process.argv.length; i += 1) {
  if (process.argv[i] === '--access-token-ttl') {
    accessTokenTtl = Number(process.argv[i + 1]);
    i += 1;
  } else {
    console.error(`oidc_provider: unknown argument ${process.argv[i]}`);
    process.exit(2);
  }
}

function emit(event) {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

// A resource on this machine: the tests' servers all listen on loopback.
function isLoopbackResource(indicator) {
  try {
    const url = new URL(indicator);
    return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title, body) {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body>${body}</body></html>`;
}

async function readForm(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 16 * 1024) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-rs256', alg: 'RS256', use: 'sig' };

const server = http.createServer();
await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  // The resource's scopes are known here too: clients register with them.
  scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES.split(' ')],
  // The account is whoever the login form names; its subject is that name.
  async findAccount(_ctx, sub) {
    return { accountId: sub, async claims() { return { sub }; } };
  },
  pkce: { required: () => true },
  ttl: {
    AccessToken: () => accessTokenTtl,
    AuthorizationCode: 120,
    RefreshToken: 24 * 3600,
    Grant: 24 * 3600,
    Interaction: 600,
    Session: 24 * 3600,
  },
  // OpenID Connect keeps `offline_access` only with `prompt=consent`, which
  // MCP clients do not send: a client that may refresh gets a refresh token.
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // A client registers with the scope it first needs (`scope` in its
  // metadata), and oidc-provider would then refuse it any other: a step-up
  // to `notes:write` must stay possible, so registered clients keep no
  // scope allow-list (the consent form still grants each scope).
  extraClientMetadata: {
    properties: ['gonk_test'],
    validator(_ctx, key, _value, metadata) {
      if (key === 'gonk_test') delete metadata.scope;
    },
  },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        if (!isLoopbackResource(indicator)) {
          throw new Provider.errors.InvalidTarget(`${indicator} is not a resource of this server`);
        }
        return {
          scope: RESOURCE_SCOPES,
          audience: indicator,
          accessTokenTTL: accessTokenTtl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});

provider.on('registration_create.success', (ctx, client) => {
  emit({ event: 'register', client_id: client.clientId, redirect_uris: client.redirectUris, client_name: client.clientName });
});
provider.on('authorization.accepted', (ctx) => {
  const p = ctx.oidc.params;
  emit({
    event: 'authorize',
    client_id: p.client_id,
    scope: p.scope,
    resource: p.resource,
    code_challenge_method: p.code_challenge_method,
    has_code_challenge: Boolean(p.code_challenge),
  });
});
provider.on('grant.success', (ctx) => {
  const p = ctx.oidc.params;
  emit({ event: 'token', grant_type: p.grant_type, scope: p.scope, resource: p.resource });
});
for (const name of ['authorization.error', 'grant.error', 'registration_create.error', 'server_error']) {
  provider.on(name, (_ctx, error) => {
    console.error(`oidc_provider: ${name}: ${error.error ?? error.name}: ${error.error_description ?? error.message}`);
  });
}

// GET shows the login or the consent form; POST submits it.
async function interaction(req, res, uid) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error('the interaction does not match its cookie');
  const { prompt, params, session } = details;
  if (req.method === 'GET') {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (prompt.name === 'login') {
      res.end(page('Sign in', `<h1>Sign in to ${escape(params.client_id)}</h1>
        <form method="post" action="/interaction/${uid}"><input name="login" placeholder="account"><button>Sign in</button></form>`));
    } else {
      const scopes = [...(prompt.details.missingOIDCScope ?? []), ...Object.values(prompt.details.missingResourceScopes ?? {}).flat()];
      res.end(page('Allow', `<h1>Allow ${escape(params.client_id)}: ${escape(scopes.join(' '))}</h1>
        <form method="post" action="/interaction/${uid}"><input type="hidden" name="consent" value="yes"><button>Allow</button></form>`));
    }
    return;
  }
  const form = await readForm(req);
  let result;
  if (prompt.name === 'login') {
    const login = form.get('login');
    if (!login) {
      res.statusCode = 400;
      res.end('login is required');
      return;
    }
    result = { login: { accountId: login } };
  } else if (prompt.name === 'consent') {
    if (form.get('consent') !== 'yes') {
      result = { error: 'access_denied', error_description: 'the person said no' };
    } else {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
      const missing = prompt.details;
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
      result = { consent: { grantId: await grant.save() } };
    }
  } else {
    throw new Error(`no form for the prompt ${prompt.name}`);
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  const match = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(new URL(req.url, issuer).pathname);
  if (!match) {
    callback(req, res);
    return;
  }
  interaction(req, res, match[1]).catch((error) => {
    console.error(`oidc_provider: interaction: ${error.message}`);
    if (!res.headersSent) res.statusCode = 400;
    res.end(`interaction failed: ${error.message}`);
  });
});

emit({ issuer });
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
