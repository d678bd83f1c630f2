/*
 * words-it.js - the page's messages in Italian.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in Italian.
 */
export default {
  "lang.name": "Italiano",

  // ---- page: index.html, main.js, locale.js, format.js

  // ---- form: form.js, editor.js, parse.js, field-errors.js

  // ---- request: request.js, reply.js, base.js (the API's errors in the student's words)

  // ---- lessons: lessons.js, presets.js, random-inputs.js

  // ---- guided: guided.js

  // ---- explain: explain.js, highlight.js

  // ---- views: views.js, matrix.js, weight-scale.js, colour.js
  "views.card.q_all": "Q, tutte le teste",
  "views.card.context": "Contesto",
  "views.card.q_rope": "Q dopo RoPE",
  "views.card.k_rope": "K dopo RoPE",
  "views.card.k_cache": "Cache di K",
  "views.card.v_cache": "Cache di V",
  "views.card.scores": "QKᵀ (punteggi non ancora divisi per √d_k)",
  "views.card.scaled_scores": "Punteggi scalati = QKᵀ/√d_k",
  "views.card.scaled_scores_given": "Punteggi scalati = QKᵀ × la scala data",
  "views.card.masked_scores": "Punteggi mascherati",
  "views.card.weights": "Pesi di attenzione = softmax",
  "views.card.head_outputs": "Output della testa",
  "views.card.concat": "Concatenazione",
  "views.card.output": "Output",
  "views.lesson.name": "lezione {lesson}: {name}",
  "views.lesson.unnamed_scores": "non c'è nella lezione {lesson}: il suo {name} è già diviso per √d_k (la scheda successiva)",
  "views.scale.number": "{value}",
  "views.scale.its_largest": "il suo massimo",
  "views.scale.weights.fixed": "da 0 a 1: il colore più scuro è un peso di 1",
  "views.scale.weights.fixed_heads": "tutte le teste da 0 a 1: un colore è lo stesso peso in ogni testa",
  "views.scale.weights.own_head": "scala propria della testa {head}: il suo colore più scuro è il suo peso massimo",
  "views.scale.weights.own": "scala propria: il suo colore più scuro è il suo peso massimo",
  "views.scale.weights.own_each": "ogni testa sulla sua scala, il colore più scuro è il suo peso massimo: {list}",
  "views.scale.head_top": "testa {head} {top}",
  "views.scale.one_qkv": "una scala per Q, K e V",
  "views.scale.one_scores": "una scala per tutti i punteggi (QKᵀ, scalati, mascherati)",
  "views.scale.one_split": "una scala per Q e le sue teste",
  "views.scale.weights.card": "da 0 a 1, come ogni peso",
  "views.scale.own_card": "scala propria di questa scheda, fino al suo massimo valore assoluto",
  "views.zoom_out": "{card}: riduci",
  "views.zoom_in": "{card}: ingrandisci",
  "views.slice_of": "una fetta di {stage}",
  "views.shape": "forma",
  "views.cell": "{cell} = {value}",
  "views.cell.masked": "{cell} = {value} (mascherato: questa query non può prestare attenzione a questa key)",
  "views.masked": "mascherato",
  "views.row_sum": "somma della riga, calcolata da questa pagina",
  "views.row_empty": "{row}: non resta nessuna key a cui prestare attenzione",
  "views.canvas_label": "{card}, {rows} per {cols}: le frecce spostano il cursore e leggono il valore esatto, Invio lo spiega",
  "views.canvas_label.caption": "{card}, {rows} per {cols}, {caption}: le frecce spostano il cursore e leggono il valore esatto, Invio lo spiega",
  "views.table_label": "{card}, {caption}",
  "views.seq.title": "Sequenze del batch",
  "views.seq.group": "Sequenze",
  "views.seq.button": "Sequenza {seq}",
  "views.heads.title": "I pesi di ogni testa",
  "views.heads.choose": "scegli una testa",
  "views.heads.readout": "testa {head}: pesi[{query} → {key}] = {value}",
  "views.heads.group": "Teste",
  "views.heads.button_label": "Testa {head}: aprila; le frecce leggono i suoi pesi",
  "views.heads.keys": "key 0…{last} →",
  "views.heads.queries": "query 0…{last} ↓",
  "views.heads.button": "Testa {head}",
  "views.heads.note": "Indica una testa per il valore esatto di un peso, oppure mettila a fuoco e usa le frecce; un pixel che rappresenta più celle mostra la più grande.",

  // ---- head view and model view: head-view.js, model-view.js
  "hv.title": "Vista della testa",
  "hv.formula": "Ogni query (a sinistra) verso le key a cui presta attenzione (a destra), spessa e scura quanto il peso.",
  "hv.formula.dense": "Le linee di ogni query verso le key, spesse e scure quanto il peso; {n}×{m} coppie sono troppe insieme: indica una query o mettila a fuoco e usa le frecce.",
  "hv.aria": "Testa {head}: linee da ogni query (a sinistra) alle key a cui presta attenzione (a destra), spesse e scure quanto il peso; le frecce scelgono una query e leggono le sue key più forti",
  "hv.attends_most": "{query} presta più attenzione a: {list}",
  "hv.key_weight": "{key} {weight}",
  "hv.export.title": "Vista della testa: ogni query (a sinistra) verso le key a cui presta attenzione (a destra), spessa e scura quanto il peso",
  "hv.export.title.head": "Vista della testa {head}: ogni query (a sinistra) verso le key a cui presta attenzione (a destra), spessa e scura quanto il peso",
  "hv.export.title.head_seq": "Vista della testa {head}, sequenza {seq}: ogni query (a sinistra) verso le key a cui presta attenzione (a destra), spessa e scura quanto il peso",
  "hv.export.one_query": "Solo le linee della query {query}: troppe coppie da disegnare insieme.",
  "mv.export.head": "testa {head}",
  "mv.export.title": "I pesi di attenzione di ogni testa ({n}×{m} ciascuna): query in verticale, key in orizzontale",
  "mv.export.title_seq": "I pesi di attenzione di ogni testa, sequenza {seq} ({n}×{m} ciascuna): query in verticale, key in orizzontale",
  "mv.export.masked": "Grigio: una key a cui la query non può prestare attenzione (mascherata).",
  "mv.error.json": "non è JSON: {detail}",
  "mv.error.layers": "non contiene \"layers\": [{\"name\", \"request\"}, …]",
  "mv.error.request": "lo strato {layer} non ha \"request\"",
  "mv.error.api": "{layer}: {status} {detail}",
  "mv.layer": "strato {layer}",
  "mv.layer_group": "Strato {layer}: {name}",
  "mv.open": "Apri lo strato {layer} ({name}), testa {head}",
  "mv.scale.fixed": "tutti gli strati e le teste da 0 a 1: un colore è lo stesso peso ovunque",
  "mv.scale.layer_tops": "strato {layer} {list}",
  "mv.hint": "{name}: {layers} strati × teste; ogni quadrato sono i pesi di una testa, query in verticale, key in orizzontale, da 0 (giallo chiaro) all'estremo indicato dalla legenda (blu scuro), grigio dove una key è nascosta. Un clic apre sotto tutto il calcolo di quello strato.",
  "mv.note": "Strato {layer} ({name}) di {bundle}.",
  "mv.status.reading": "Lettura di {file}…",
  "mv.status.asking": "Richiesta dello strato {layer} di {layers}…",
  "mv.status.done": "{file}: {layers} strati.",
  "mv.status.failed": "Impossibile mostrare {file}: {detail}",

  // ---- compare: compare.js
  "cmp.head": "testa {head}",
  "cmp.state.off": "disattivato",
  "cmp.state.heads": "testa {a} − testa {b}",
  "cmp.state.dtype": "float64 − float32",
  "cmp.state.mask": "con − senza le maschere",
  "cmp.title": "Confronta",
  "cmp.failed": "La seconda richiesta non è riuscita: {detail}",
  "cmp.with_masks": "con le maschere",
  "cmp.without_masks": "senza",
  "cmp.card.weights": "Pesi: {a} − {b}",
  "cmp.card.output": "Output: {a} − {b}",
  "cmp.formula.head_weights": "pesi della testa {head}, {a} meno {b}; massima |differenza| {largest}",
  "cmp.formula.weights": "pesi, {a} meno {b}; massima |differenza| {largest}",
  "cmp.formula.output": "output, {a} meno {b}; massima |differenza| {largest}",
  "cmp.scale": "rosso: il primo è maggiore; fino alla massima |differenza|",
  "cmp.heading": "Confronta: {a} − {b}",
  "cmp.from.this": "questo risultato",
  "cmp.from.second": "una seconda richiesta",

  // ---- share and export: share.js, short-link.js, snapshot.js
  "share.option.head_view": "vista della testa (linee)",
  "share.option.head_view.head": "vista della testa (linee), testa {head}",
  "share.option.model_view": "i pesi di ogni testa (vista del modello)",
  "share.export.title": "{card} ({rows}×{cols})",
  "share.export.title.head": "{card}, testa {head} ({rows}×{cols})",
  "share.export.title.seq": "{card}, sequenza {seq} ({rows}×{cols})",
  "share.export.title.head.seq": "{card}, testa {head}, sequenza {seq} ({rows}×{cols})",
  "share.copied": "Link copiato.",
  "share.copy_by_hand": "Seleziona il link e copialo.",
  "share.size": "Dimensione dell'immagine",
  "share.size.times": "{scale}×",

  // ---- presentation view
  "present.button": "Presenta: una fase alla volta, a schermo intero",
  "present.prev": "Precedente",
  "present.next": "Successiva",
  "present.exit": "Esci dalla presentazione",
  "present.hint": "Frecce o Pag su/Pag giù: la fase precedente o la successiva; Esc: torna alla pagina.",
  "present.count": "fase {stage} di {stages}",
  "present.stage_title": "{group}: {step}",
  "present.empty": "Ancora nulla di calcolato: carica una lezione o premi Calcola.",
  "present.skip": "Vai alla modalità guidata e alla presentazione",
};
