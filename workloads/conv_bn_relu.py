"""A small conv-BN-ReLU network in eval mode: convolutions stay library calls, BN+ReLU fuse."""

import torch
from torch import nn

SIZES = [1, 2, 4, 8, 16]  # batch of 3x64x64 images
SMALL_SIZES = [1, 2, 4]
IMAGE = 64


def conv_bn_relu(cin, cout, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
    )


class SmallConvNet(nn.Module):
    def __init__(self, width=32, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn_relu(3, width),
            conv_bn_relu(width, 2 * width, stride=2),
            conv_bn_relu(2 * width, 2 * width),
        )
        self.head = nn.Linear(2 * width, classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


def inputs_for(n, device, dtype):
    torch.manual_seed(n)
    return (torch.randn(n, 3, IMAGE, IMAGE, device=device, dtype=dtype),)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    if size == "small":
        model = SmallConvNet(width=4).to(device=device, dtype=dtype).eval()
        return model, (torch.randn(1, 3, 8, 8, device=device, dtype=dtype),)
    # eval(): BatchNorm uses its running statistics, so it is a pointwise
    # scale+shift that Inductor fuses with the ReLU (folding it into the conv
    # weights needs torch._inductor.config.freezing = True).
    model = SmallConvNet().to(device=device, dtype=dtype).eval()
    return model, inputs_for(8, device, dtype)
