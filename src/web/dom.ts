// The few DOM helpers the checkout and the dashboard share: build elements, labelled inputs, and show an
// error where assistive technology announces it and the keyboard lands on the field at fault.

export function byId<Element extends HTMLElement = HTMLElement>(id: string): Element {
  const found = document.getElementById(id);
  if (!found) throw new Error(`The page has no #${id}.`);
  return found as Element;
}

export function element<Tag extends keyof HTMLElementTagNameMap>(tag: Tag, attributes: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[Tag] {
  const created = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) created.setAttribute(name, value);
  created.append(...children);
  return created;
}

/** A labelled text input: the label is `#<id>-label`, so an error message can name the field as shown. */
export function field(label: string, id: string, attributes: Record<string, string> = {}): HTMLElement {
  return element('div', { class: 'field' }, element('label', { for: id, id: `${id}-label` }, label), element('input', { id, name: id, type: 'text', ...attributes }));
}

/** Shows `message` in the alert region (announced), marks `input` invalid and moves the focus to it. */
export function showError(alert: HTMLElement, input: HTMLInputElement | null, message: string): void {
  alert.textContent = message;
  for (const marked of document.querySelectorAll('[aria-invalid=true]')) marked.removeAttribute('aria-invalid');
  if (input) {
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', alert.id);
    input.focus();
  }
}
