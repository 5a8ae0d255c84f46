"""A scripted stand-in for a chat model, for judge tests."""

from stellar.llm.base import Completion, messages_tokens


class FakeModel:
    """Answers with scripted texts (in call order, or per vote ``sample``); records calls."""

    role = "judge"

    def __init__(self, replies, name="fake:judge"):
        self.name = name
        self.replies = replies
        self.calls = []

    async def complete(
        self,
        messages,
        *,
        temperature=None,
        max_tokens=None,
        seed=None,
        json_schema=None,
        sample=0,
    ):
        self.calls.append(
            {
                "messages": messages,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "seed": seed,
                "json_schema": json_schema,
                "sample": sample,
            }
        )
        scripted = self.replies
        text = scripted[sample] if isinstance(scripted, dict) else scripted.pop(0)
        return Completion(text=text, input_tokens=messages_tokens(messages), output_tokens=20)
