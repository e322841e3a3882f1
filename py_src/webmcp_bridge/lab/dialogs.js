// dialogs.js: the JS half of webmcp_bridge/lab/dialogs.py (webmcp_bridge/calls/dialogs.py holds every rule; this
// only reads, clicks and reports). Its only page object is apputils' Dialog (attach).
//
// JupyterLab's Dialog (@jupyterlab/apputils) adds every dialog to the static Dialog.tracker when it is
// constructed; launch() queues it behind the dialog on screen and attaches it to document.body when its turn
// comes; answering disposes it. So the open dialogs are the tracker's undisposed ones, in creation order, and
// "shown" is "attached". Each gets an id "d-<n>" (never reused in the page) and, when first seen, how long ago
// the person last pressed a key or a pointer button (a trusted input event), in ms; Python decides from it
// whether the dialog is theirs. (navigator.userActivation cannot tell: script run by test or automation tools
// through the DevTools protocol counts as a gesture, real input events do not come from them.)
// Text is read with textContent only; a password's value is never read. A dialog's opening is pushed to
// Python at once (opened()), so Python knows no dialog is open without asking (no crossing per tool result).
(() => {
  let Dialog = null;
  let notify = null; // Python's listener after a burst of changes (a proxy Python holds and destroys in unwatch)
  let opened = null; // Python's listener the moment a dialog is made (the same); neither's return value is used
  let observer = null;
  let scheduled = false;
  let next = 1;
  const seen = new WeakMap(); // dialog widget -> {id, inputAgoMs}
  let lastInput = -Infinity; // performance.now() of the person's last key or pointer press
  const onInput = (event) => { if (event.isTrusted) lastInput = performance.now(); };
  const tracker = () => Dialog?.tracker ?? null; // JupyterLab's tracker of every dialog made

  function info(dialog) {
    let entry = seen.get(dialog);
    if (!entry) {
      entry = { id: `d-${next++}`, inputAgoMs: lastInput === -Infinity ? null : performance.now() - lastInput };
      seen.set(dialog, entry);
    }
    return entry;
  }

  function changed() {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      notify?.();
    }, 0);
  }

  function onAdded(_tracker, dialog) {
    info(dialog); // record the gesture state now, when the dialog opens
    opened?.();
    changed();
  }

  const open = () => tracker()?.filter((dialog) => !dialog.isDisposed) ?? [];

  const text = (node, max = Infinity) => String(node?.textContent || '').replace(/\s+/g, ' ').trim().slice(0, max);

  function describe(dialog, max) {
    const node = dialog.node;
    const body = node.querySelector('.jp-Dialog-body');
    const bodyText = text(body);
    const field = body && body.querySelector('input, textarea, select');
    let input = null;
    if (field) {
      const type = field.tagName === 'INPUT' ? String(field.type || 'text').toLowerCase() : field.tagName.toLowerCase();
      if (type === 'password') input = { type };
      else if (type === 'checkbox' || type === 'radio') input = { type, checked: !!field.checked };
      else input = { type, value: String(field.value ?? '').slice(0, max) };
    }
    const box = node.querySelector('.jp-Dialog-footer .jp-Dialog-checkbox');
    const boxInput = box && box.querySelector('input');
    const { id, inputAgoMs } = info(dialog);
    return {
      id,
      title: text(node.querySelector('.jp-Dialog-header'), max),
      body: bodyText.slice(0, max),
      bodyCut: bodyText.length > max,
      shown: !!dialog.isAttached,
      inputAgoMs,
      buttons: [...node.querySelectorAll('.jp-Dialog-footer button.jp-Dialog-button')].map((button) => ({
        label: text(button.querySelector('.jp-Dialog-buttonLabel') || button, max),
        accept: button.classList.contains('jp-mod-accept'),
        warn: button.classList.contains('jp-mod-warn'),
        disabled: !!button.disabled,
      })),
      input,
      checkbox: box ? { label: text(box, max), checked: !!(boxInput && boxInput.checked) } : null,
    };
  }

  function unwatch() {
    tracker()?.widgetAdded.disconnect(onAdded);
    observer?.disconnect();
    observer = null;
    for (const type of ['pointerdown', 'keydown']) document.removeEventListener(type, onInput, true);
    notify = null;
    opened = null;
  }

  const api = {
    // Without @jupyterlab/apputils in the share scope no dialog is ever reported.
    attach(ctx) {
      Dialog = ctx?.modules?.apputils?.Dialog ?? null;
    },
    available() { return !!tracker(); },
    // watch(callback, onOpened): Python's listeners: callback() once per burst (after a tick) when a dialog opens, is
    // shown or closes; onOpened() synchronously when one is made. unwatch() drops them; so does dispose() (the
    // session's worker is gone).
    dispose() { unwatch(); },
    watch(callback, onOpened) {
      unwatch();
      notify = callback;
      opened = onOpened ?? null;
      tracker()?.widgetAdded.connect(onAdded);
      observer = new MutationObserver((records) => {
        const isDialog = (n) => n.nodeType === 1 && n.classList.contains('jp-Dialog');
        if (records.some((r) => [...r.addedNodes, ...r.removedNodes].some(isDialog))) changed();
      });
      observer.observe(document.body, { childList: true });
      for (const type of ['pointerdown', 'keydown']) document.addEventListener(type, onInput, true);
      return !!tracker();
    },
    unwatch,
    // The open dialogs, oldest first, as JSON text: [{id, title, body, bodyCut, shown, inputAgoMs (null: no input yet),
    // buttons: [{label, accept, warn, disabled}], input: {type, value?, checked?} | null,
    // checkbox: {label, checked} | null}]; every text cut to maxChars characters.
    snapshot(maxChars) {
      return JSON.stringify(open().map((dialog) => describe(dialog, maxChars)));
    },
    // Click button `index` of dialog `id` as the person would (a click event on the button element, so JupyterLab
    // resolves the dialog through its own handler). Returns "clicked", "gone", "queued", "disabled" or "no-button".
    click(id, index) {
      const dialog = open().find((d) => info(d).id === id);
      if (!dialog) return 'gone';
      if (!dialog.isAttached) return 'queued';
      const button = dialog.node.querySelectorAll('.jp-Dialog-footer button.jp-Dialog-button')[index];
      if (!button) return 'no-button';
      if (button.disabled) return 'disabled';
      button.click();
      return 'clicked';
    },
  };

  return api;
})()
