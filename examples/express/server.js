// A resource server in Express that accepts Gatehouse access tokens, set up exactly as
// express-oauth2-jwt-bearer's README says: the issuer URL and the audience, nothing else. The
// library finds the JWKS and the signing algorithms through /.well-known/openid-configuration.
import express from 'express';
import { auth } from 'express-oauth2-jwt-bearer';

const app = express();

app.use(
  auth({
    issuerBaseURL: process.env.GATEHOUSE_URL, // e.g. https://gatehouse.example.com (PUBLIC_URL)
    audience: process.env.AUDIENCE ?? process.env.GATEHOUSE_URL, // Gatehouse's audience is its PUBLIC_URL
    strict: true, // RFC 9068 access-token profile: typ at+jwt, client_id, iat, jti, sub
  }),
);

app.get('/hello', (req, res) => {
  const { sub, role, sid } = req.auth.payload;
  res.json({ hello: sub, role, sid });
});

const port = Number(process.env.PORT ?? 3001);
app.listen(port, '127.0.0.1', () => console.log(`express example on http://127.0.0.1:${port}/hello`));
