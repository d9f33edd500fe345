// Prints the schema built from the code to schema.graphql (checked in; a test fails when it is stale).
import { writeFileSync } from 'node:fs';
import { printedSchema } from '../src/api/print.ts';

writeFileSync(new URL('../schema.graphql', import.meta.url), printedSchema());
