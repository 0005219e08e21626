"""Vision models from Hugging Face transformers: ResNet-50 (``build``), ViT-Base (``vit``)
and MobileNetV2 (``mobilenet``), inference on a batch of 224x224 images.

    dlcprof run examples/vision.py                 # ResNet-50
    dlcprof run examples/vision.py:vit
    dlcprof run examples/vision.py --dynamic true --sweep     # ResNet-50 over batch sizes
"""

import torch
from transformers import (
    MobileNetV2Config,
    MobileNetV2ForImageClassification,
    ResNetConfig,
    ResNetForImageClassification,
    ViTConfig,
    ViTForImageClassification,
)

SIZES = [1, 2, 4, 8]  # batch sizes
SMALL_SIZES = [1, 2]


def inputs_for(n, device, dtype):
    """A batch of n 224x224 images."""
    torch.manual_seed(n)
    return (torch.randn(n, 3, 224, 224, device=device, dtype=dtype),)


def _classifier(model, device, dtype, size):
    model = model.to(device=device, dtype=dtype).eval()

    def forward(pixel_values):
        return model(pixel_values).logits

    return forward, inputs_for(4 if size == "default" else 1, device, dtype)


def build(device, dtype, size="default"):
    """ResNet-50 (small: two stages of one narrow bottleneck block each)."""
    torch.manual_seed(0)
    cfg = (
        ResNetConfig()
        if size == "default"
        else ResNetConfig(embedding_size=16, hidden_sizes=[32, 64], depths=[1, 1], num_labels=10)
    )
    return _classifier(ResNetForImageClassification(cfg), device, dtype, size)


def vit(device, dtype, size="default"):
    """ViT-Base/16 (small: two narrow layers, 32x32 patches)."""
    torch.manual_seed(0)
    cfg = (
        ViTConfig()
        if size == "default"
        else ViTConfig(
            hidden_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=128,
            patch_size=32,
            num_labels=10,
        )
    )
    return _classifier(ViTForImageClassification(cfg), device, dtype, size)


def mobilenet(device, dtype, size="default"):
    """MobileNetV2 1.0 (small: width 0.35)."""
    torch.manual_seed(0)
    cfg = (
        MobileNetV2Config()
        if size == "default"
        else MobileNetV2Config(depth_multiplier=0.35, num_labels=10)
    )
    return _classifier(MobileNetV2ForImageClassification(cfg), device, dtype, size)
