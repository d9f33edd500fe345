// A processor of PROCESSORS as the running server plays it (server.ts brings each to life): apart from the
// table so that the store, its resources and the callbacks can name a processor's types without a cycle.
import type { Callbacks } from './callbacks.ts';
import type { ProcessorControl } from './control.ts';
import type { Processor } from './processors.ts';
import type { SandboxStore } from './store.ts';

/** A processor as the running server plays it: its row of PROCESSORS, its own memory, its callbacks (if it has webhooks) and its steering (/_control). */
export interface Personality {
  processor: Processor;
  store: SandboxStore;
  callbacks: Callbacks | null;
  control: ProcessorControl;
}
