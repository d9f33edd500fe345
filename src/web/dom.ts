// The few DOM helpers the checkout and the dashboard share: build elements, labelled inputs, and show an
// error where assistive technology announces it and the keyboard lands on the field at fault.

export function byId<Element extends HTMLElement = HTMLElement>(id: string): Element {
  const found = document.getElementById(id);
  if (!found) throw new Error(`The page has no #${id}.`);
  return found as Element;
}

export function element<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[Tag] {
  const created = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) created.setAttribute(name, value);
  created.append(...children);
  return created;
}

/** A labelled text input: the label is `#<id>-label`, so an error message can name the field as shown. */
export function field(label: string, id: string, attributes: Record<string, string> = {}): HTMLElement {
  return element(
    'div',
    { class: 'field' },
    element('label', { for: id, id: `${id}-label` }, label),
    element('input', { id, name: id, type: 'text', ...attributes }),
  );
}

/**
 * Shows `message` in the alert region (announced), marks each input at fault invalid and moves the focus to
 * the first, then scrolls the alert into view: on a phone the form is taller than the screen, and focusing a
 * field high up would otherwise leave the message below the fold.
 */
export function showError(alert: HTMLElement, invalid: HTMLInputElement | readonly HTMLInputElement[] | null, message: string): void {
  alert.textContent = message;
  for (const marked of document.querySelectorAll('[aria-invalid=true]')) marked.removeAttribute('aria-invalid');
  const inputs = invalid instanceof HTMLInputElement ? [invalid] : (invalid ?? []);
  for (const input of inputs) {
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', alert.id);
  }
  inputs[0]?.focus();
  alert.scrollIntoView({ block: 'nearest' });
}
