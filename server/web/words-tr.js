/*
 * words-tr.js - the page's messages in Turkish.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in Turkish.
 */
export default {
  "lang.name": "Türkçe",

  // ---- page: index.html, main.js, locale.js, format.js

  // ---- form: form.js, editor.js, parse.js, field-errors.js

  // ---- request: request.js, reply.js, base.js (the API's errors in the student's words)

  // ---- lessons: lessons.js, presets.js, random-inputs.js

  // ---- guided: guided.js

  // ---- explain: explain.js, highlight.js

  // ---- views: views.js, matrix.js, weight-scale.js, colour.js
  "views.card.q_all": "Q, bütün başlar",
  "views.card.context": "Bağlam",
  "views.card.q_rope": "RoPE sonrası Q",
  "views.card.k_rope": "RoPE sonrası K",
  "views.card.k_cache": "K önbelleği",
  "views.card.v_cache": "V önbelleği",
  "views.card.scores": "QKᵀ (henüz √d_k'ya bölünmemiş ham skorlar)",
  "views.card.scaled_scores": "Ölçekli skorlar = QKᵀ/√d_k",
  "views.card.scaled_scores_given": "Ölçekli skorlar = QKᵀ × verilen ölçek",
  "views.card.masked_scores": "Maskelenmiş skorlar",
  "views.card.weights": "Dikkat ağırlıkları = softmax",
  "views.card.head_outputs": "Başın çıktısı",
  "views.card.concat": "Birleştirme",
  "views.card.output": "Çıktı",
  "views.lesson.name": "ders {lesson}: {name}",
  "views.lesson.unnamed_scores": "ders {lesson}'de yok: oradaki {name} zaten √d_k'ya bölünmüş (sonraki kart)",
  "views.scale.number": "{value}",
  "views.scale.its_largest": "kendi en büyüğü",
  "views.scale.weights.fixed": "0'dan 1'e: en koyu renk 1 ağırlığıdır",
  "views.scale.weights.fixed_heads": "her baş 0'dan 1'e: bir renk her başta aynı ağırlıktır",
  "views.scale.weights.own_head": "{head}. başın kendi ölçeği: en koyu rengi en büyük ağırlığıdır",
  "views.scale.weights.own": "kendi ölçeği: en koyu rengi en büyük ağırlığıdır",
  "views.scale.weights.own_each": "her baş kendi ölçeğinde, en koyu rengi en büyük ağırlığı: {list}",
  "views.scale.head_top": "baş {head} {top}",
  "views.scale.one_qkv": "Q, K ve V için tek ölçek",
  "views.scale.one_scores": "bütün skor aşamaları için tek ölçek (QKᵀ, ölçekli, maskelenmiş)",
  "views.scale.one_split": "Q ve başları için tek ölçek",
  "views.scale.weights.card": "her ağırlık gibi 0'dan 1'e",
  "views.scale.own_card": "bu kartın kendi ölçeği, en büyük mutlak değerine kadar",
  "views.zoom_out": "{card}: uzaklaştır",
  "views.zoom_in": "{card}: yakınlaştır",
  "views.slice_of": "{stage} dizisinin bir dilimi",
  "views.shape": "şekil",
  "views.cell": "{cell} = {value}",
  "views.cell.masked": "{cell} = {value} (maskeli: bu sorgu bu anahtara dikkat edemez)",
  "views.masked": "maskeli",
  "views.row_sum": "satır toplamı, bu sayfa hesapladı",
  "views.row_empty": "{row}: dikkat edilecek anahtar kalmadı",
  "views.canvas_label": "{card}, {rows} × {cols}: ok tuşları imleci taşır ve tam değerini okur, Enter açıklar",
  "views.canvas_label.caption": "{card}, {rows} × {cols}, {caption}: ok tuşları imleci taşır ve tam değerini okur, Enter açıklar",
  "views.table_label": "{card}, {caption}",
  "views.seq.title": "Yığındaki diziler",
  "views.seq.group": "Diziler",
  "views.seq.button": "Dizi {seq}",
  "views.heads.title": "Her başın ağırlıkları",
  "views.heads.choose": "bir baş seçin",
  "views.heads.readout": "baş {head}: ağırlıklar[{query} → {key}] = {value}",
  "views.heads.group": "Başlar",
  "views.heads.button_label": "Baş {head}: açın; ok tuşları ağırlıklarını okur",
  "views.heads.keys": "anahtar 0…{last} →",
  "views.heads.queries": "sorgu 0…{last} ↓",
  "views.heads.button": "Baş {head}",
  "views.heads.note": "Bir ağırlığın tam değeri için bir başı gösterin ya da odaklayıp ok tuşlarını kullanın; birkaç hücreyi temsil eden bir piksel en büyüğünü gösterir.",

  // ---- head view and model view: head-view.js, model-view.js
  "hv.title": "Baş görünümü",
  "hv.formula": "Her sorgudan (solda) dikkat ettiği anahtarlara (sağda), ağırlığı kadar kalın ve koyu çizgiler.",
  "hv.formula.dense": "Her sorgunun anahtarlara çizgileri, ağırlığı kadar kalın ve koyu; {n}×{m} çift bir arada çok fazla: bir sorguyu gösterin ya da odaklayıp ok tuşlarını kullanın.",
  "hv.aria": "Baş {head}: her sorgudan (solda) dikkat ettiği anahtarlara (sağda) ağırlığı kadar kalın ve koyu çizgiler; ok tuşları bir sorgu seçer ve en güçlü anahtarlarını okur",
  "hv.attends_most": "{query} en çok şunlara dikkat eder: {list}",
  "hv.key_weight": "{key} {weight}",
  "hv.export.title": "Baş görünümü: her sorgudan (solda) dikkat ettiği anahtarlara (sağda), ağırlığı kadar kalın ve koyu",
  "hv.export.title.head": "Baş görünümü, baş {head}: her sorgudan (solda) dikkat ettiği anahtarlara (sağda), ağırlığı kadar kalın ve koyu",
  "hv.export.title.head_seq": "Baş görünümü, baş {head}, dizi {seq}: her sorgudan (solda) dikkat ettiği anahtarlara (sağda), ağırlığı kadar kalın ve koyu",
  "hv.export.one_query": "Yalnızca {query} sorgusunun çizgileri: bir arada çizmek için çok fazla çift var.",
  "mv.export.head": "baş {head}",
  "mv.export.title": "Her başın dikkat ağırlıkları (her biri {n}×{m}): sorgular aşağı, anahtarlar yana",
  "mv.export.title_seq": "Her başın dikkat ağırlıkları, dizi {seq} (her biri {n}×{m}): sorgular aşağı, anahtarlar yana",
  "mv.export.masked": "Gri: sorgunun dikkat edemeyeceği bir anahtar (maskeli).",
  "mv.error.json": "JSON değil: {detail}",
  "mv.error.layers": "içinde \"layers\": [{\"name\", \"request\"}, …] yok",
  "mv.error.request": "{layer}. katmanın \"request\" alanı yok",
  "mv.error.api": "{layer}: {status} {detail}",
  "mv.layer": "katman {layer}",
  "mv.layer_group": "Katman {layer}: {name}",
  "mv.open": "Katman {layer} ({name}), baş {head} aç",
  "mv.scale.fixed": "bütün katmanlar ve başlar 0'dan 1'e: bir renk her yerde aynı ağırlıktır",
  "mv.scale.layer_tops": "katman {layer} {list}",
  "mv.hint": "{name}: {layers} katman × baş; her kare bir başın ağırlıkları, sorgular aşağı, anahtarlar yana, 0'dan (açık sarı) göstergenin belirttiği uca (koyu mavi), gizli anahtarlar gri. Bir tıklama o katmanın bütün hesabını aşağıda açar.",
  "mv.note": "{bundle} dosyasının {layer}. katmanı ({name}).",
  "mv.status.reading": "{file} okunuyor…",
  "mv.status.asking": "{layers} katmandan {layer}. isteniyor…",
  "mv.status.done": "{file}: {layers} katman.",
  "mv.status.failed": "{file} gösterilemedi: {detail}",

  // ---- compare: compare.js
  "cmp.head": "baş {head}",
  "cmp.state.off": "kapalı",
  "cmp.state.heads": "baş {a} − baş {b}",
  "cmp.state.dtype": "float64 − float32",
  "cmp.state.mask": "maskeli − maskesiz",
  "cmp.title": "Karşılaştır",
  "cmp.failed": "İkinci istek başarısız oldu: {detail}",
  "cmp.with_masks": "maskelerle",
  "cmp.without_masks": "maskesiz",
  "cmp.card.weights": "Ağırlıklar: {a} − {b}",
  "cmp.card.output": "Çıktı: {a} − {b}",
  "cmp.formula.head_weights": "baş {head} ağırlıkları, {a} eksi {b}; en büyük |fark| {largest}",
  "cmp.formula.weights": "ağırlıklar, {a} eksi {b}; en büyük |fark| {largest}",
  "cmp.formula.output": "çıktı, {a} eksi {b}; en büyük |fark| {largest}",
  "cmp.scale": "kırmızı: birincisi daha büyük; en büyük |fark|a kadar",
  "cmp.heading": "Karşılaştır: {a} − {b}",
  "cmp.from.this": "bu sonuç",
  "cmp.from.second": "ikinci bir istek",

  // ---- share and export: share.js, short-link.js, snapshot.js
  "share.option.head_view": "baş görünümü (çizgiler)",
  "share.option.head_view.head": "baş görünümü (çizgiler), baş {head}",
  "share.option.model_view": "her başın ağırlıkları (model görünümü)",
  "share.export.title": "{card} ({rows}×{cols})",
  "share.export.title.head": "{card}, baş {head} ({rows}×{cols})",
  "share.export.title.seq": "{card}, dizi {seq} ({rows}×{cols})",
  "share.export.title.head.seq": "{card}, baş {head}, dizi {seq} ({rows}×{cols})",
  "share.copied": "Bağlantı kopyalandı.",
  "share.copy_by_hand": "Bağlantıyı seçip kopyalayın.",
  "share.size": "Resim boyutu",
  "share.size.times": "{scale}×",

  // ---- presentation view
  "present.button": "Sun: her seferinde bir aşama, tam ekran",
  "present.prev": "Önceki",
  "present.next": "Sonraki",
  "present.exit": "Sunumdan çık",
  "present.hint": "Ok tuşları ya da Page Up/Page Down: önceki ya da sonraki aşama; Escape: sayfaya dön.",
  "present.count": "aşama {stage} / {stages}",
  "present.stage_title": "{group}: {step}",
  "present.empty": "Henüz hesaplanan bir şey yok: bir ders yükleyin ya da Hesapla'ya basın.",
  "present.skip": "Rehberli moda ve sunuma atla",
};
