"use strict";
/* A small Markdown renderer for chat replies. Everything is HTML-escaped FIRST; only the
   markup this file itself produces is ever HTML, so a message can never inject tags,
   attributes or script. Links are limited to http(s) and mailto. */
(function (global) {
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ESC[c]);
  }

  const KEYWORDS = new Set((
    "and as assert async await break case catch class const continue def default del do elif else " +
    "enum except export extends false finally fn for from func function go if impl import in " +
    "interface is let lambda loop match mod mut new nil none not null or pass pub raise return " +
    "self static struct super switch this throw true try type typeof use var void while with yield"
  ).split(" "));

  /* Token-level highlighting of already-escaped code: strings, comments, numbers, keywords. */
  function highlight(escaped) {
    const pattern = /(#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\/)|(&quot;(?:[^&\n]|&(?!quot;))*?&quot;|&#39;(?:[^&\n]|&(?!#39;))*?&#39;|`[^`\n]*`)|\b(\d+(?:\.\d+)?)\b|\b([A-Za-z_][A-Za-z0-9_]*)\b/g;
    return escaped.replace(pattern, (match, comment, string, number, word) => {
      if (comment) return '<span class="tok-comment">' + comment + "</span>";
      if (string) return '<span class="tok-string">' + string + "</span>";
      if (number) return '<span class="tok-number">' + number + "</span>";
      if (word && KEYWORDS.has(word.toLowerCase())) return '<span class="tok-keyword">' + word + "</span>";
      return match;
    });
  }

  /* Code spans, links and bare URLs are found in ONE pass over the escaped text and each
     replaced by a placeholder, so no later pattern ever looks inside markup an earlier one
     produced (an autolink pass re-matching inside a link's href is how an attribute got
     out). Emphasis runs last, on text whose markup is all placeholders. */
  // groups: 1 code span; 2, 3 [label](url); 4, 5 a bare URL and what precedes it
  const TOKEN = /`([^`\n]+)`|\[([^\]\n]+)\]\(((?:https?:\/\/|mailto:)[^\s<)]+)\)|(^|[\s(])(https?:\/\/[^\s<)]+)/g;

  function link(url, label) {
    return '<a href="' + url + '" target="_blank" rel="noopener noreferrer">' + label + "</a>";
  }

  function emphasis(text) {
    let out = text.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>");
    out = out.replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, "$1<em>$2</em>");
    return out.replace(/~~([^~\n]+)~~/g, "<del>$1</del>");
  }

  function inline(escaped) {
    const parts = [];
    const hold = (html) => { parts.push(html); return "\u0000" + (parts.length - 1) + "\u0000"; };
    const out = escaped.replace(TOKEN, (_, code, label, url, lead, bare) => {
      if (code !== undefined) return hold("<code>" + code + "</code>");
      if (label !== undefined) return hold(link(url, emphasis(label)));
      return lead + hold(link(bare, bare));
    });
    return emphasis(out).replace(/\u0000(\d+)\u0000/g, (_, i) => parts[Number(i)]);
  }

  function render(source) {
    // NUL marks placeholders in inline(); a message's own NULs must not name one.
    const lines = escapeHtml(String(source || "").replace(/\u0000/g, "\uFFFD")).split("\n");
    const html = [];
    let paragraph = [];
    let list = null;
    const flushParagraph = () => {
      if (paragraph.length) html.push("<p>" + inline(paragraph.join("<br>")) + "</p>");
      paragraph = [];
    };
    const flushList = () => {
      if (list) html.push("</" + list + ">");
      list = null;
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = line.match(/^\s*(```|~~~)\s*([\w+#.-]*)\s*$/);
      if (fence) {
        flushParagraph(); flushList();
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
        const lang = fence[2] ? ' data-lang="' + fence[2] + '"' : "";
        html.push('<pre class="code"' + lang + "><code>" + highlight(body.join("\n")) + "</code></pre>");
        continue;
      }
      const heading = line.match(/^(#{1,4})\s+(.*)$/);
      if (heading) {
        flushParagraph(); flushList();
        const level = heading[1].length + 2;
        html.push("<h" + level + ">" + inline(heading[2]) + "</h" + level + ">");
        continue;
      }
      const bullet = line.match(/^\s*[-*+]\s+(.*)$/);
      const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
      if (bullet || numbered) {
        flushParagraph();
        const kind = bullet ? "ul" : "ol";
        if (list !== kind) { flushList(); html.push("<" + kind + ">"); list = kind; }
        html.push("<li>" + inline((bullet || numbered)[1]) + "</li>");
        continue;
      }
      const quote = line.match(/^&gt;\s?(.*)$/);
      if (quote) {
        flushParagraph(); flushList();
        html.push("<blockquote>" + inline(quote[1]) + "</blockquote>");
        continue;
      }
      if (!line.trim()) { flushParagraph(); flushList(); continue; }
      flushList();
      paragraph.push(line);
    }
    flushParagraph(); flushList();
    return html.join("");
  }

  global.HeraldMarkdown = { render, escapeHtml };
})(window);
