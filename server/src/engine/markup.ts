// Text put into the SVG the engine draws and the SSML its voice reads: both are XML, so
// a script's or a name's `&`, `<`, `>` and `"` are written as entities.
export const escapeXml = (s: string): string => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
