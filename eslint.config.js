import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import { defineConfig, includeIgnoreFile } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** The browser's globals, read from the DOM declarations tsconfig.web.json type-checks src/web and packages/js against. */
const domDeclarations = readFileSync(fileURLToPath(import.meta.resolve('typescript/lib/lib.dom.d.ts')), 'utf8');
const browserGlobals = Object.fromEntries([...domDeclarations.matchAll(/^declare (?:var|function) (\w+)/gm)].map(([, name]) => [name, 'readonly']));

// The rules that need no type information: with it (recommendedTypeChecked) `eslint .` took almost 4 minutes
// on 2 CPUs instead of about 25 s, and `tsc` in npm test already checks the types.
export default defineConfig(
  // What .gitignore lists: the generated Prisma client, Pothos types and typed documents, and run output.
  includeIgnoreFile(join(import.meta.dirname, '.gitignore')),
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `const { secret: _secret, ...rest } = value` is how a key is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    files: ['src/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          // Prisma sends a batch from the code of the request that started it, so a keyed request's writes in another's
          // batch would not count for it (src/platform/db/write-witness.ts).
          // Whatever the first argument is but a function written in place (an array, or a variable holding one).
          selector:
            "CallExpression:matches([callee.property.name='$transaction'], [callee.property.value='$transaction']):not([arguments.0.type=/^(ArrowFunctionExpression|FunctionExpression)$/])",
          message: 'Pass $transaction a function written in place, $transaction(async (tx) => ...): the array form batches statements across requests.',
        },
        {
          // Taken off the client, or called through call/apply/bind, its argument escapes the rule above.
          selector:
            "Property[key.name='$transaction'][parent.type='ObjectPattern'], MemberExpression:matches([object.property.name='$transaction'], [object.property.value='$transaction'])",
          message: 'Call $transaction on the client itself, db.$transaction(async (tx) => ...), so its argument can be checked.',
        },
      ],
    },
  },
  {
    files: ['src/web/**', 'packages/js/src/**'],
    languageOptions: { globals: browserGlobals },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
