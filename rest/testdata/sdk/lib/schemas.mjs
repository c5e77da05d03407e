// Compares what the generated SDK requires of a record (its zod inbound schemas) with what
// the server's OpenAPI document promises (its `required` lists), object by object, by
// walking both trees in step from the Message record down.

/** wrappers the walk looks through: optional, nullable, default, effects (transform), lazy. */
function unwrap(schema) {
  for (;;) {
    const def = schema._def;
    switch (def.typeName) {
      case 'ZodOptional': case 'ZodNullable': case 'ZodDefault': case 'ZodCatch': case 'ZodReadonly':
        schema = def.innerType; break;
      case 'ZodEffects': schema = def.schema; break;
      case 'ZodLazy': schema = def.getter(); break;
      case 'ZodBranded': schema = def.type; break;
      case 'ZodPipeline': schema = def.in; break;
      default: return schema;
    }
  }
}

/** optional reports whether a field may be left out of the record (undefined passes). */
function optional(schema) {
  return schema.safeParse(undefined).success;
}

/** zodRequired lists the fields of a zod object that the SDK requires. */
function zodRequired(obj) {
  return Object.keys(obj.shape).filter((k) => !optional(obj.shape[k])).sort();
}

/** zodObjects returns the object schemas reachable through arrays, records and unions, for one field. */
function zodObjects(schema) {
  const s = unwrap(schema);
  switch (s._def.typeName) {
    case 'ZodObject': return [s];
    case 'ZodArray': return zodObjects(s._def.type);
    case 'ZodUnion': case 'ZodDiscriminatedUnion': return [...s._def.options].flatMap(zodObjects);
    case 'ZodRecord': return zodObjects(s._def.valueType); // a map: its values
    default: return [];
  }
}

/** resolves a $ref of the document, following chains. */
function deref(doc, node) {
  while (node && node.$ref) {
    const path = node.$ref.replace(/^#\//, '').split('/');
    node = path.reduce((n, k) => n?.[k], doc);
  }
  return node;
}

/** oaObjects returns the object schemas a property of the document can be (through arrays, maps, allOf, anyOf, oneOf). */
function oaObjects(doc, node) {
  node = deref(doc, node);
  if (!node) return [];
  if (node.allOf) {
    const parts = node.allOf.map((p) => deref(doc, p));
    return [{
      name: parts.map((p) => p.title).filter(Boolean).join('&') || node.title,
      properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
      required: parts.flatMap((p) => p.required ?? []),
      ref: node.allOf.map((p) => p.$ref).filter(Boolean).join('&'),
    }];
  }
  if (node.anyOf || node.oneOf) return (node.anyOf ?? node.oneOf).flatMap((n) => oaObjects(doc, n));
  const types = [node.type].flat();
  if (types.includes('array')) return oaObjects(doc, node.items);
  if (!node.properties && node.additionalProperties && typeof node.additionalProperties === 'object') {
    return oaObjects(doc, node.additionalProperties); // a map: its values
  }
  if (types.includes('object') || node.properties) return [{ properties: node.properties ?? {}, required: node.required ?? [] }];
  return [];
}

/** schemaName names the component a property points to, for messages. */
function schemaName(doc, node) {
  node = node?.items ?? node;
  const ref = node?.$ref ?? node?.items?.$ref ?? node?.allOf?.find((p) => p.$ref)?.$ref;
  return ref ? ref.split('/').pop() : undefined;
}

/**
 * compareRequired walks the SDK schema and the OpenAPI schema together from the given
 * roots and returns, for every object the document describes, the path, the component
 * name, the fields the SDK requires, the OpenAPI `required` list, and the differences.
 * Where the SDK offers a union of objects (step metadata), the member sharing the most
 * field names with the document's object is the one compared.
 */
export function compareRequired(doc, zodRoot, oaRoot, rootPath = 'Message') {
  const results = [];
  const visit = (zodSchemas, oaNode, path, name) => {
    const oaList = oaObjects(doc, oaNode);
    if (oaList.length === 0 || zodSchemas.length === 0) return;
    for (const oa of oaList) {
      const props = Object.keys(oa.properties);
      if (props.length === 0) continue; // a free-form object: nothing to compare
      const overlap = (z) => Object.keys(z.shape).filter((k) => props.includes(k)).length;
      const zod = [...zodSchemas].sort((a, b) => overlap(b) - overlap(a))[0];
      const sdkRequired = zodRequired(zod);
      const oaRequired = [...new Set(oa.required)].sort();
      results.push({
        path, name, sdkRequired, oaRequired,
        missing: sdkRequired.filter((k) => !oaRequired.includes(k)),
        extra: oaRequired.filter((k) => !sdkRequired.includes(k)),
        undocumented: sdkRequired.filter((k) => !props.includes(k)),
        union: zodSchemas.length > 1 ? `${zodSchemas.length} SDK variants, compared the closest` : undefined,
      });
      for (const key of props) {
        if (!(key in zod.shape)) continue;
        const child = zodObjects(zod.shape[key]);
        if (child.length) visit(child, oa.properties[key], `${path}.${key}`, schemaName(doc, oa.properties[key]) ?? key);
      }
    }
  };
  visit(zodObjects(zodRoot), oaRoot, rootPath, schemaName(doc, oaRoot) ?? rootPath);
  return results;
}
