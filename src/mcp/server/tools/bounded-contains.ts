import {
  _,
  str,
  type AnySchema,
  type CodeKeywordDefinition,
  type KeywordCxt,
  type KeywordErrorDefinition,
  type Name,
} from 'ajv';
import { alwaysValidSchema, Type } from 'ajv/dist/compile/util';

const error: KeywordErrorDefinition = {
  message: ({ params: { min, max } }) =>
    max === undefined
      ? str`must contain at least ${min} valid item(s)`
      : str`must contain at least ${min} and no more than ${max} valid item(s)`,
  params: ({ params: { min, max } }) =>
    max === undefined ? _`{minContains: ${min}}` : _`{minContains: ${min}, maxContains: ${max}}`,
};

/**
 * Ajv's `contains` keyword (with `minContains` and `maxContains`), changed in one point: the errors
 * of an item that does not match are dropped at once. Ajv's own keeps them until the keyword
 * ends, whether the array passes or not and even without `allErrors`, so an array of a million
 * non-matching items held a million error objects (about 150 bytes each for an item that may cost
 * 8). They said nothing useful anyway: an item is allowed not to match `contains`. What the
 * keyword reports is unchanged: the `contains` error itself.
 *
 * Registered in place of Ajv's (`removeKeyword('contains')`, then `addKeyword`); written on Ajv
 * 8's own definition, whose code generator API it uses.
 */
export const boundedContains: CodeKeywordDefinition = {
  keyword: 'contains',
  type: 'array',
  schemaType: ['object', 'boolean'],
  before: 'uniqueItems',
  trackErrors: true,
  error,
  code(cxt: KeywordCxt) {
    const { gen, data, it } = cxt;
    // Ajv types a keyword's schema and its parent as `any`; this keyword is registered for `contains` only.
    const schema = cxt.schema as AnySchema;
    const parentSchema = cxt.parentSchema as { minContains?: number; maxContains?: number };
    const min: number = it.opts.next && parentSchema.minContains !== undefined ? parentSchema.minContains : 1;
    const max: number | undefined = it.opts.next ? parentSchema.maxContains : undefined;
    const len = gen.const('len', _`${data}.length`);
    cxt.setParams({ min, max });
    // "minContains": 0 without "maxContains" makes the keyword a no-op, as in Ajv.
    if (max === undefined && min === 0) return;
    if (max !== undefined && min > max) {
      cxt.fail();
      return;
    }
    if (alwaysValidSchema(it, schema)) {
      let cond = _`${len} >= ${min}`;
      if (max !== undefined) cond = _`${cond} && ${len} <= ${max}`;
      cxt.pass(cond);
      return;
    }

    it.items = true;
    const valid = gen.name('valid');
    if (max === undefined && min === 1) {
      validateItems(valid, () => gen.if(valid, () => gen.break()));
    } else if (min === 0) {
      gen.let(valid, true);
      if (max !== undefined) gen.if(_`${data}.length > 0`, validateItemsWithCount);
    } else {
      gen.let(valid, false);
      validateItemsWithCount();
    }
    cxt.result(valid, () => cxt.reset());

    function validateItemsWithCount(): void {
      const schValid = gen.name('_valid');
      const count = gen.let('count', 0);
      validateItems(schValid, () => gen.if(schValid, () => checkLimits(count)));
    }

    function validateItems(itemValid: Name, block: () => void): void {
      gen.forRange('i', 0, len, (i) => {
        cxt.subschema({ keyword: 'contains', dataProp: i, dataPropType: Type.Num, compositeRule: true }, itemValid);
        // The one change: a non-matching item's errors go now, back to the count before the keyword.
        gen.if(_`!${itemValid}`, () => cxt.reset());
        block();
      });
    }

    function checkLimits(count: Name): void {
      gen.code(_`${count}++`);
      if (max === undefined) {
        gen.if(_`${count} >= ${min}`, () => gen.assign(valid, true).break());
      } else {
        gen.if(_`${count} > ${max}`, () => gen.assign(valid, false).break());
        if (min === 1) gen.assign(valid, true);
        else gen.if(_`${count} >= ${min}`, () => gen.assign(valid, true));
      }
    }
  },
};
