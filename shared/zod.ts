/**
 * zod for the code that ships: `zod/mini`, the same schemas and types as full zod at a fraction
 * of its bundle and cold start (docs/developing.md#cold-start), with full zod's English messages, so a
 * bad variable still reads `Invalid input: expected string, received undefined` in the logs.
 * Import it as a namespace (`import * as z from './zod.ts'`): a named `z` would keep every
 * export of zod in the bundle. infra/wire-forms.ts rebuilds these schemas with full zod.
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
