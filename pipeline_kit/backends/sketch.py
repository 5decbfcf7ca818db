"""The offline backend: real storyboard PNGs, MP4 clips and voices, deterministic and free.

It lets the whole pipeline run on a laptop with no GPU and no account: same params, same bytes
(on the same machine and fonts); its voices are the offline voice's (`offline_voice.py`). Kinds
`llm` and `noop` get a small JSON record so a book can run end to end on this backend alone.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline_kit import fonts, kinds
from pipeline_kit.backends import clip, offline_voice, params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.classify import classified
from pipeline_kit.errors import BadInput
from pipeline_kit.film import drawing

KINDS = kinds.made_by("sketch")


class SketchBackend:
    """Draws frames and sheets with Pillow, encodes clips with imageio-ffmpeg."""

    name = "sketch"
    draws_text = True  # its pictures carry the book's words: Chinese needs a CJK font

    def suffix(self, kind: str) -> str:
        """.png for image kinds, .mp4 for video, .wav for voice, .json for llm/noop."""
        params.check_kind(kind, KINDS, self.name)
        return params.suffix_for(kind)

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Make the output of `job` at `job.out_path`."""
        params.check_kind(job.kind, KINDS, self.name)
        media = kinds.BY_NAME[job.kind].media
        if media is kinds.Media.AUDIO:
            return offline_voice.make(None).run(job, ctx)
        if media is kinds.Media.VIDEO:
            result = self._video(job, ctx)
        elif media is kinds.Media.IMAGE:
            result = self._image(job, ctx)
        else:
            result = self._record(job)
        return Output(
            path=job.out_path,
            model=self.name,
            result=result,
            settings={"seed": params.seed(job), "font": fonts.cjk_font_path()},
        )

    def _image(self, job: Job, ctx: CallContext) -> dict[str, Any]:
        p = job.params
        size, seed = params.size(p), params.seed(job)
        ctx.stage("generating_image")
        info = None
        if kinds.BY_NAME[job.kind].role is kinds.Role.SHEET:
            image = drawing.character_sheet(str(params.require(p, "name")), params.text(p, "prompt"), size)
        else:
            characters = p.get("characters") or []
            if not isinstance(characters, (list, tuple)):
                raise params.permanent("bad_param", "params field 'characters' must be a list")
            shot = drawing.Shot(
                shot_id=str(params.require(p, "shot_id")),
                kind=job.kind,
                caption=params.text(p, "caption") or params.text(p, "prompt"),
                characters=tuple(str(c) for c in characters),
                location=p.get("location") or None,
                time_of_day=p.get("time_of_day") or None,
                chapter=params.text(p, "chapter"),
                seq=params.text(p, "seq"),
            )
            image = drawing.storyboard_frame(shot, size, seed)
            info = drawing.frame_info(shot, seed)
        ctx.stage("finalizing")
        image.save(job.out_path, format="PNG", pnginfo=info)
        return {"width": size[0], "height": size[1]}

    def _video(self, job: Job, ctx: CallContext) -> dict[str, Any]:
        p = job.params
        size, rate = params.even_size(p), params.fps(p)
        count = max(1, round(params.duration_s(p) * rate))
        ctx.stage("loading_model")
        paths = job.inputs.get("first_frame"), job.inputs.get("last_frame")
        first = clip.load_frame(paths[0], "first_frame", size)
        last = clip.load_frame(paths[1], "last_frame", size)
        start, end = drawing.read_frame_info(paths[0]), drawing.read_frame_info(paths[1])
        ctx.stage("generating_video")
        motion = "walk"  # figures walk from their first spots to their last
        if start is not None and end is not None and drawing.same_shot(start[0], end[0]):
            pictures = drawing.walk(start, end, size, count)
        else:  # frames it did not draw (or of two different shots): a hard cut
            motion, pictures = "cut", clip.cut(first, last, count)
        clip.write_mp4(job.out_path, pictures, size, rate)
        ctx.stage("finalizing")
        return {
            "width": size[0],
            "height": size[1],
            "frames": count,
            "fps": rate,
            "duration_s": count / rate,
            "motion": motion,
        }

    def _record(self, job: Job) -> dict[str, Any]:
        prompt = job.params.get("prompt") or json.dumps(job.params.get("messages"), ensure_ascii=False)
        record = {
            "task_id": job.task_id,
            "kind": job.kind,
            "backend": self.name,
            "text": f"(offline sketch reply to: {str(prompt)[:200]})",
        }
        job.out_path.write_text(json.dumps(record, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        return record


def make(arg: str | None) -> SketchBackend:
    """Registry factory for `sketch` (takes no argument)."""
    if arg is not None:
        raise BadInput(f"backend 'sketch' takes no argument, got 'sketch:{arg}'")
    return SketchBackend()
