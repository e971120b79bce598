// getJSON fetches one of the shop's JSON files.
export async function getJSON(path) {
  const res = await fetch(path, { headers: { Accept: 'application/json' } });
  if (!res.ok) {
    throw new Error(`${path} answered ${res.status}`);
  }
  return res.json();
}
