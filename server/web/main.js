/*
 * main.js - starts the page: each module's listeners in the order the page
 * has always added them, then the lesson or the shared state in the URL.
 */
import { startLang } from "./locale.js";
import { useLang } from "./words.js";
import { init as initPageWords } from "./page-words.js";
import { init as initForm, maskBody } from "./form.js";
import { init as initRequest } from "./request.js";
import { fmt } from "./format.js";
import { PALETTES, luminance } from "./colour.js";
import { init as initCompare } from "./compare.js";
import { init as initLessons } from "./lessons.js";
import { init as initExplain } from "./explain.js";
import { init as initShare } from "./share.js";
import { init as initShortLink, openFromAddress } from "./short-link.js";
import { init as initSnapshot } from "./snapshot.js";
import { init as initModelView } from "./model-view.js";
import { init as initGuided } from "./guided.js";
import { init as initPresentation } from "./presentation.js";

// the language first (its catalog loaded): every module writes its words in it
const first = startLang(location.search, navigator.languages);
await useLang(first.code, { chosen: first.chosen });
initPageWords();
initForm();
initRequest();
initCompare();
initLessons();
initExplain();
initShare();
initModelView();
initShortLink();
initSnapshot();
initGuided();
initPresentation();
// for the browser test: the page's own formatter, palettes, luminance and mask
Object.assign(window.attentionVisualizer, { fmt, PALETTES, luminance, maskBody });

// a link (#s=…, #state=…) restores its page; ?lesson=002 and ?random=… open their inputs
openFromAddress();
