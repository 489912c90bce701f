/** Saving bytes the page made (the result as .npy) as a file through the browser's download. */

/** Offers `bytes` as a download named `name`. */
export function saveBytes(bytes: Uint8Array, name: string, type = 'application/octet-stream'): void {
  const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has taken the blob by the time click() returns; revoke after a turn to be safe.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
