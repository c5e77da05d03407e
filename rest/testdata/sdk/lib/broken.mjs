// A row another program broke: plain SQL leaving text that is not JSON in a message's
// payload, overrides and cta, and the same columns put back as the fixture holds them.

/** quoted is v as JSON in a MariaDB string literal. */
const quoted = (v) => `'${JSON.stringify(v).replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

/** breakJSON leaves text that is not JSON in the payload, overrides and cta of record's row. */
export const breakJSON = (sql, record) =>
  sql(`UPDATE messages SET payload = 'xxx', overrides = '{', cta = 'nope' WHERE id = '${record._id}'`);

/** restoreJSON puts back the payload, overrides and cta of record's row. */
export const restoreJSON = (sql, record) =>
  sql(`UPDATE messages SET payload = ${quoted(record.payload)}, overrides = ${quoted(record.overrides)}, cta = ${quoted(record.cta)} WHERE id = '${record._id}'`);
