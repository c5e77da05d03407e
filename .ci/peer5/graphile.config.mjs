// PostGraphile 5 as .ci/bench-peer runs it: the amber preset (v5's defaults, the same
// schema names as version 4 for these tables), one pg service on the database msgpeer
// with its default pool, and, when PEER_JWT_SECRET is set, the lazy-jwt preset: a
// request's Bearer token (HS256, audience "postgraphile") becomes its role and
// jwt.claims.* settings, under which the row-level security of .ci/peer/rls.sql applies.
// Settings (environment): PEER_URL, PEER_PORT, PEER_JWT_SECRET.
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { PgLazyJWTPreset } from "postgraphile/presets/lazy-jwt";
import { makePgService } from "postgraphile/adaptors/pg";

const secret = process.env.PEER_JWT_SECRET || undefined;

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset, ...(secret ? [PgLazyJWTPreset] : [])],
  pgServices: [makePgService({ connectionString: process.env.PEER_URL, schemas: ["public"] })],
  grafserv: { host: "127.0.0.1", port: Number(process.env.PEER_PORT), pgJwtSecret: secret },
  grafast: { explain: false },
};

export default preset;
