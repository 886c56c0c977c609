// RFC 6570 for the template form: the variables of a template, and its expansion as the person types.

const EXPRESSION = /\{([+#./;?&]?)([^}]+)\}/g;

/** The variable names of a template, in order. */
export function variables(template) {
  return [...template.matchAll(EXPRESSION)].flatMap((m) =>
    m[2].split(",").map((v) => v.replace(/[*]$|:\d+$/, "")),
  );
}

/** RFC 6570 expansion of what the form holds; an empty field is undefined. */
export function expand(template, values) {
  return template.replace(EXPRESSION, (_, op, list) => {
    const names = list.split(",").map((v) => v.replace(/[*]$|:\d+$/, ""));
    const reserved = op === "+" || op === "#";
    const enc = (v) =>
      reserved
        ? encodeURI(v)
        : encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    const defined = names.filter((n) => values[n] !== undefined && values[n] !== "");
    if (!defined.length) return "";
    const named = op === ";" || op === "?" || op === "&";
    const parts = defined.map((n) =>
      named ? `${n}${values[n] === "" && op === ";" ? "" : `=${enc(values[n])}`}` : enc(values[n]),
    );
    const first = op === "+" || op === "" ? "" : op;
    const sep = { "": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&" }[op];
    return first + parts.join(sep);
  });
}
