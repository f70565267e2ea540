// A real OAuth 2.1 / OpenID Connect authorization server for the MCP
// client's sign-in tests: Node's `oidc-provider`, installed by
// scripts/oauth_peers.sh into the folder named by OAUTH_PEERS.
//
// It listens on 127.0.0.1 on a port the system picks and prints one JSON
// line, {"issuer": ..., "port": ...}, once it serves. Settings from the
// environment:
//   ACCESS_TOKEN_TTL  seconds an access token lives (default 3600)
//   ISSUER_HOST       the host its issuer names (default 127.0.0.1; a
//                     different name makes its metadata's issuer differ
//                     from the address it is reached at)
// Dynamic client registration is open, PKCE is required, access tokens
// for a resource (RFC 8707) are JWTs signed with a key made at start and
// published at /jwks, refresh tokens are issued to clients allowed the
// grant and rotate on use. The development login and consent pages take
// any login and password. Tokens for a resource may carry the scopes `mcp`
// and `admin` (the one a step-up asks for). GET /_stats counts
// registrations and grants.
import http from 'node:http';
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';

const peers = process.env.OAUTH_PEERS;
const { default: Provider } = await import(
  pathToFileURL(`${peers}/node_modules/oidc-provider/lib/index.js`).href
);

const ttl = Number(process.env.ACCESS_TOKEN_TTL || 3600);
const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address();
const issuer = `http://${process.env.ISSUER_HOST || '127.0.0.1'}:${port}`;

const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', use: 'sig', alg: 'RS256' };

const stats = { registrations: 0, grants: {} };

const provider = new Provider(issuer, {
  clients: [],
  jwks: { keys: [key] },
  scopes: ['openid', 'offline_access', 'mcp', 'admin'],
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => ({
        scope: 'mcp admin',
        audience: resource,
        accessTokenTTL: ttl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  pkce: { required: () => true },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  ttl: { AccessToken: ttl, RefreshToken: 86400, Grant: 86400, Session: 86400, Interaction: 600 },
});

provider.on('registration_create.success', () => { stats.registrations += 1; });
provider.on('grant.success', (ctx) => {
  const type = ctx.oidc.params.grant_type;
  stats.grants[type] = (stats.grants[type] || 0) + 1;
});
provider.use(async (ctx, next) => {
  if (ctx.path === '/_stats') {
    ctx.body = stats;
    return;
  }
  await next();
});

server.on('request', provider.callback());
console.log(JSON.stringify({ issuer, port }));
