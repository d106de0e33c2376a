// The first selector of parts that is not CSS, with why, as [index, message]; null when all
// are. Checked on an empty fragment: nothing in the page is looked up or touched.
(parts) => {
  for (let i = 0; i < parts.length; i++) {
    try { document.createDocumentFragment().querySelector(parts[i]); }
    catch (e) { return [i, e.message]; }
  }
  return null;
}
