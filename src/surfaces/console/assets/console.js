// The console's only script, and every page works without it: copy buttons, a confirmation before destructive
// actions, a busy state on a form while it is being sent (the loading state), and a key's kind following its scopes.
'use strict';
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const source = document.querySelector(button.getAttribute('data-copy'));
  if (!source) return;
  source.select();
  navigator.clipboard?.writeText(source.value).then(
    () => { button.textContent = 'Copied'; },
    () => { document.execCommand('copy'); button.textContent = 'Copied'; },
  );
});
document.addEventListener('submit', (event) => {
  const form = event.target;
  const submitter = event.submitter;
  const question = submitter?.getAttribute('data-confirm');
  if (question && !window.confirm(question)) {
    event.preventDefault();
    return;
  }
  for (const button of form.querySelectorAll('button[type="submit"]')) button.setAttribute('aria-busy', 'true');
  form.setAttribute('aria-busy', 'true');
});
// After a page loads with an error or a notice, move focus to it so keyboard and screen-reader users hear it.
window.addEventListener('DOMContentLoaded', () => {
  const message = document.querySelector('[role="alert"], .card.secret');
  if (message) { message.setAttribute('tabindex', '-1'); message.focus(); }
});
// Ticking a preset or a scope of a new API key makes it restricted, in sight, before anything is sent. Without this
// script the server still refuses a standard key with scopes ticked (docs/console.md): it never guesses.
document.addEventListener('change', (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || box.name !== 'scopes' || !box.checked) return;
  const kind = box.form?.querySelector('select[name="key_kind"]');
  if (kind) kind.value = 'restricted';
});
