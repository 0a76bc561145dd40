// authidp.mjs (tests/bench/auth.sh): a static JWKS on 127.0.0.1 and one
// RS256 access token for it (iss: this server, aud: "bench", 1 h).
// Prints "ISS <url>" and "TOKEN <jwt>"; exits after BENCH_IDP_SECONDS.
import http from 'node:http';
import crypto from 'node:crypto';

const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k', use: 'sig', alg: 'RS256' }] });
const srv = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(jwks);
});
srv.listen(0, '127.0.0.1', () => {
  const iss = `http://127.0.0.1:${srv.address().port}`;
  const b = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const input = `${b({ alg: 'RS256', kid: 'k', typ: 'at+jwt' })}.` +
    `${b({ iss, sub: 'bench', aud: 'bench', iat: now, exp: now + 3600 })}`;
  const sig = crypto.sign('sha256', Buffer.from(input), privateKey).toString('base64url');
  process.stdout.write(`ISS ${iss}\nTOKEN ${input}.${sig}\n`);
});
setTimeout(() => process.exit(0), 1000 * Number(process.env.BENCH_IDP_SECONDS || 600));
