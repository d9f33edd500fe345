// What the settings pages share: who may change what (the server decides regardless; the pages only hide
// controls a role cannot use, docs/dashboard.md), a confirmed action, a secret shown once, labelled inputs.
import { element } from '../../dom.ts';
import type { DashboardContext, DashboardUser } from '../page.ts';
import { scrollRegion, table } from '../shared-view.ts';

type Role = DashboardUser['role'];

/** The roles allowed each kind of change or reading, as docs/dashboard.md's roles table has them. */
export const MAY = {
  manageTeam: ['OWNER'],
  readAudit: ['OWNER'],
  manageConnectors: ['OWNER', 'ADMIN'],
  readConnectors: ['OWNER', 'ADMIN', 'DEVELOPER'],
  manageWebhooks: ['OWNER', 'ADMIN', 'DEVELOPER'],
  manageApiKeys: ['OWNER', 'ADMIN', 'DEVELOPER'],
} as const satisfies Record<string, readonly Role[]>;

export const may = (context: DashboardContext, change: keyof typeof MAY) => (MAY[change] as readonly Role[]).includes(context.user.role);

/** A table in its own sideways-scrolling region (a phone's width). */
export const scrollingTable = (label: string, headings: string[], body: (Node | string)[][]) => scrollRegion(label, table(headings, body));

export const section = (heading: string, ...children: (Node | string)[]) => element('section', { class: 'card' }, element('h2', {}, heading), ...children);

/** A labelled control: input, select or textarea, the label's `for` its id. */
export function labelled(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): HTMLElement {
  return element('div', { class: 'field' }, element('label', { for: control.id }, label), control);
}

export function select(id: string, options: readonly string[], chosen?: string): HTMLSelectElement {
  const shown = element(
    'select',
    { id, name: id },
    ...options.map((option) => element('option', { value: option }, option.charAt(0).toUpperCase() + option.slice(1).toLowerCase())),
  );
  if (chosen) shown.value = chosen;
  return shown;
}

/**
 * Runs a change once the reader confirms it: the button is disabled meanwhile (no double submission), the
 * API's refusal is shown in the alert region in its own words, and `done` (a redraw, a notice) follows success.
 */
export async function confirmed(
  context: DashboardContext,
  button: HTMLButtonElement,
  question: string,
  confirmLabel: string,
  change: () => Promise<void>,
): Promise<void> {
  if (!(await context.confirm(question, confirmLabel))) return;
  button.disabled = true;
  try {
    await change();
  } catch (error) {
    context.showFailure(error);
  } finally {
    button.disabled = false;
  }
}

/** A button whose click runs `confirmed`. */
export function actionButton(
  context: DashboardContext,
  label: string,
  question: () => string,
  confirmLabel: string,
  change: () => Promise<void>,
  attributes: Record<string, string> = {},
): HTMLButtonElement {
  const button = element('button', { type: 'button', ...attributes }, label);
  button.addEventListener('click', () => void confirmed(context, button, question(), confirmLabel, change));
  return button;
}

/** A form whose submission runs `confirmed` (Enter in a field submits it, as a reader expects). */
export function actionForm(
  context: DashboardContext,
  submitLabel: string,
  question: () => string,
  confirmLabel: string,
  change: () => Promise<void>,
  ...fields: HTMLElement[]
): HTMLFormElement {
  const submit = element('button', { type: 'submit' }, submitLabel);
  const form = element('form', { class: 'settings-form', novalidate: '' }, element('div', { class: 'row' }, ...fields), submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void confirmed(context, submit, question(), confirmLabel, change);
  });
  return form;
}

/**
 * A secret the API shows once (a new API key, a signing key): read-only in a labelled field, selectable,
 * with a copy button; `note` says what to do with it.
 */
export function secretOnce(id: string, label: string, secret: string, note: string): HTMLElement {
  const input = element('input', { id, type: 'text', readonly: '', class: 'secret', spellcheck: 'false', autocomplete: 'off' });
  input.value = secret;
  const copy = element('button', { type: 'button' }, 'Copy');
  const copied = element('span', { role: 'status', class: 'copied' });
  copy.addEventListener('click', () => {
    input.select();
    void navigator.clipboard.writeText(secret).then(
      () => (copied.textContent = 'Copied.'),
      () => (copied.textContent = 'Copying was refused: select the text and copy it.'),
    );
  });
  return element(
    'div',
    { class: 'secret-once', 'data-secret': id },
    labelled(label, input),
    element('div', { class: 'row' }, copy, copied),
    element('p', {}, note),
  );
}

/** Refuses a field's value before asking the API: the message in the alert region, the field marked and focused. */
export function refuseField(context: DashboardContext, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, message: string): void {
  control.setAttribute('aria-invalid', 'true');
  control.addEventListener('input', () => control.removeAttribute('aria-invalid'), { once: true });
  context.showFailure(new Error(message));
  control.focus();
}
