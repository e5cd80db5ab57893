"""Documents the task catalogue (docs/tasks.md) shows each JEEM prompt on, as the builder writes them.

The dialect references are the four captions the paper prints for one shared-pool image, Omani
halwa (Figure 8, L732-748); the VQA questions are the paper's Table 2 examples (L107-110), one per
dialect it reads as. The MSA caption and the answers are ours; the image is synthetic. The
``_eval350`` tasks render as their full-data task and are not repeated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.core.spec import TaskSpec
from arab_mm_tasks.jeem.tasks import EVAL_SUBSET

PROVENANCE = (
    "Rendered for hand-made documents (`arab_mm_tasks/jeem/examples.py`: the paper's Figure 8 dialect "
    "captions and Table 2 questions, an MSA caption and answers of ours, a synthetic image); "
    f"`_{EVAL_SUBSET}` tasks render as their full-data task:"
)
CAPTIONS = {  # Figure 8 (L732-733, L737-738, L742-743, L747-748), as printed
    "jordanian": "هاي صورة فيها طبق حلو تقليدي محطوط بصحن قزاز كبير وشفاف، ومغلف من تحت بالبلاستيك عشان يضل نظيف، "
    "والحلو مزين بأنواع مختلفة من المكسرات زي اللوز المشور والفستق، وعلى الوجه في حبة جوز، والحلو لونه غامقة على "
    "الاغلب معمول بالكراوية او الدبس.",
    "emirati": "طاسة زجاجية فيها حلوى عمانية، وعليها مكسرات متنوعة. عدالها غطا الطاسة. شكلها الطاسة بيديده وتوهم "
    "فاتحينها، لأن أغلب الحلوى محد هاتينها، ويعدو جزء من الطاسة مغطاي بنابليون. الطاسة محطوطه على باركيه بني.",
    "egyptian": "صورة لبودنج من لونه اكيد بودنج شيكولاتة عليها قطعة عين جمل وشرائح صنوبر صغيرة على الوش في طبق "
    "حلويات ازاز عميق وصغير وله غطا ازاز مفتوح ومحطوط ساند على الطبق وعليه غلاف بلاستيك شفاف لسة مفتوح نازل على نص "
    "الطبق. الطبق محطوط على الارض اللي معمول من الباركيه شكل الخشب.",
    "moroccan": "هاد التصويرة كتبان فيها واحد الطاسة صغيرة ديال الجاج مغطاة ببولوفان من التحت وفهاد الطاسة كيبان "
    "فيها تحلية كحلة يمكن شكلها قزاز ديال الطاسة كتشوفو شي حاجة بحال كراميل وهاد التحلية مزوقة بالكوكو وببسطايش "
    "وواحد الكركاعة فالوسط.",
    "msa": "وعاء زجاجي فيه حلوى عمانية داكنة تعلوها مكسرات متنوعة، وبجانبه غطاؤه، وهو موضوع على أرضية خشبية.",  # ours
}
QUESTIONS = {  # Table 2 (L107-110), by the dialect each reads as; the answers are ours
    "egyptian": ("الناس اللي على السقف لابسين إيه؟", "لابسين جلاليب وطواقي بيضا."),
    "moroccan": ("هاد الناس اللي فكوزينة واش رجال و لا عيلات؟", "كاينين جوج عيالات وراجل واحد."),
    "emirati": ("كم طراد نقدر نشوفه في الصورة؟", "نقدر نشوف ثلاث طرادات عند الشاطئ."),
    "jordanian": ("مين انهم حاطين اثني عالتار؟", "آه، في طنجرة على النار وشكلهم بطبخوا."),
}
COUNTRY = {"jordanian": "jordan", "emirati": "emirates", "egyptian": "egypt", "moroccan": "morocco", "msa": "emirates"}


def example(spec: TaskSpec) -> tuple[Mapping[str, Any], str] | None:
    """A caption or question document for `spec`'s variety (None for the ``_eval350`` tasks)."""
    from arab_mm_tasks.testing.synthetic import make_image

    if spec.name.endswith(f"_{EVAL_SUBSET}"):
        return None
    kind, variety = spec.name.removeprefix("jeem_").split("_", 1)
    country = COUNTRY[variety]
    doc: dict[str, Any] = {
        "id": f"{country}-omani-halwa",
        "image_id": "omani-halwa",
        "image": make_image("jeem"),
        "country": country,
        "dialect": variety if variety != "msa" else "emirati",
        "image_origin_country": "emirates",
        "is_shared_pool": True,
    }
    if kind == "caption":
        return {**doc, "variety": variety, "reference": CAPTIONS[variety]}, PROVENANCE
    question, answer = QUESTIONS[variety]
    return {**doc, "question_index": 0, "question": question, "reference": answer, "answerable": True}, PROVENANCE
