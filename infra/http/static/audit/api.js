// The key and the JSON routes. The key is kept in this tab's session storage only, sent
// only as an Authorization header to this server, and never put in a URL the server
// sees: a `#key=...` fragment is read once, then taken out of the address bar.

const STORAGE_NAME = 'casino-audit-key';

/** The server would not take the key: unknown (401) or of the wrong role (403). */
export class Refused extends Error {
  constructor(status, code, detail) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

/** Any other answer that is not a success, with the problem's code and detail. */
export class Failed extends Error {
  constructor(status, code, detail) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

export function takeKeyFromFragment() {
  const parts = window.location.hash.replace(/^#/, '').split('&').filter(Boolean);
  const given = parts.find((part) => part.startsWith('key='));
  if (given === undefined) return null;
  const rest = parts.filter((part) => part !== given).join('&');
  const { pathname, search } = window.location;
  window.history.replaceState(null, '', pathname + search + (rest ? `#${rest}` : ''));
  let key = '';
  try {
    key = decodeURIComponent(given.slice('key='.length)).trim();
  } catch {
    key = '';
  }
  return key || null;
}

export function storedKey() {
  return window.sessionStorage.getItem(STORAGE_NAME);
}

export function rememberKey(key) {
  window.sessionStorage.setItem(STORAGE_NAME, key);
}

export function forgetKey() {
  window.sessionStorage.removeItem(STORAGE_NAME);
}

export async function getJSON(path, key) {
  const response = await fetch(path, {
    headers: { Authorization: `Bearer ${key}`, Accept: 'application/json' },
    cache: 'no-store',
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const code = body && body.code ? body.code : `http_${response.status}`;
  const detail = body && body.detail ? body.detail : response.statusText || 'no detail given';
  if (response.status === 401 || response.status === 403) throw new Refused(response.status, code, detail);
  if (!response.ok) throw new Failed(response.status, code, detail);
  return body;
}
